package server

import (
	"strconv"
	"time"
)

// errConnClosed stops the parse of a connection that is already being
// closed (its auth timeout fired while a CONNECT was arriving).
var errConnClosed = &protoError{fatal: true}

// maxPubCache bounds a connection's cache of publish decisions; past it
// the cache starts over, so a client publishing to endless distinct
// subjects costs a bounded map.
const maxPubCache = 128

// replyGrant is one reply subject a connection may publish to under
// allow_responses.
type replyGrant struct {
	left    int       // publishes left; <0 for no limit
	expires time.Time // zero for never
}

// replyPruneEvery bounds the replies map: every so many grants, the
// used-up and expired ones are dropped.
const replyPruneEvery = 1024

// countUnauthenticated counts a new connection as one that has yet to
// authenticate, when clients must; accept calls it before the TLS
// handshake, so that sockets stuck in one count too.
func (c *conn) countUnauthenticated() {
	if c.auth().required && c.pendingAuth.CompareAndSwap(false, true) {
		c.srv.unauthenticated.Add(1)
	}
}

// startAuth arms the auth timeout of a new connection when clients must
// authenticate (after the TLS handshake, as the reference), and counts it
// as unauthenticated if accept did not already.
func (c *conn) startAuth() {
	a := c.auth()
	if !a.required {
		return
	}
	c.countUnauthenticated()
	// With a no_auth_user, a client may start with any op and is then
	// that user (handleOp); otherwise CONNECT must come first.
	c.parser.connectFirst = a.noAuth == nil
	c.needAuth = true
	c.mu.Lock()
	c.authTimer = time.AfterFunc(c.authTimeout(), c.authTimerFired)
	c.mu.Unlock()
}

// authTimerFired closes a connection that did not authenticate in time,
// with the reference's error.
func (c *conn) authTimerFired() {
	c.mu.Lock()
	if c.authTimer == nil { // CONNECT stopped it first
		c.mu.Unlock()
		return
	}
	c.authTimer = nil
	c.authTimedOut = true
	c.mu.Unlock()
	c.srv.authFailures.Add(1)
	c.log.Warn("authentication timeout", "timeout", c.authTimeout())
	c.closeWithErr(errAuthTimeout.text, errAuthTimeout.text)
}

// stopAuthTimer disarms the auth timeout as a CONNECT arrives. It
// reports false when the timeout fired first: the connection is closing.
func (c *conn) stopAuthTimer() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.authTimer != nil {
		c.authTimer.Stop()
		c.authTimer = nil
	}
	return !c.authTimedOut
}

// authenticate checks a CONNECT's credentials and, when they are good,
// makes the connection that user. Bad ones are logged with the user and
// the reason, never the secret, and refused with the reference's error.
func (c *conn) authenticate(o *connectOptions) error {
	a := c.auth()
	if !a.required {
		return nil
	}
	cr := o.credentials
	if c.ws {
		cr = c.withCookies(cr)
	}
	id, fail := a.authenticate(cr, c.nonce, c.peerCert)
	id, fail = c.consultCallout(a, cr, o, id, fail)
	if fail == nil && !id.allowsConnType(c.connType()) {
		fail = &authFailure{user: id.name, reason: "connection type " + c.connType() + " not allowed"}
	}
	now := a.now()
	if fail == nil && id.window != nil {
		fail = id.window.admits(id.name, c.ip, now)
	}
	if fail != nil {
		c.srv.authFailures.Add(1)
		c.log.Warn("authorization violation", "user", fail.user, "reason", fail.reason)
		return errAuthViolation
	}
	if err := c.becomeUser(id); err != nil {
		return err
	}
	c.armExpiry(id, now)
	if cur := c.auth(); cur != a {
		// A reload came between the check and now and may have missed
		// this connection: check it against the new configuration.
		c.reauthorize(cur)
	}
	return nil
}

// becomeUser makes the connection id's: its permissions apply to every
// op from now on, and its account's limits. It refuses, with the
// reference's error, when the account has all the connections it may.
func (c *conn) becomeUser(id *identity) error {
	if err := c.enterAccount(id); err != nil {
		if err == errAccountConnections {
			c.log.Warn("connection refused", "user", id.name, "account", c.srv.accountFor(id).name, "reason", errAccountConnections.text)
		}
		return err
	}
	c.parser.maxPayload = lowerLimit(lowerLimit(c.srv.liveOpts().MaxPayload, c.acc.limits.Load().MaxPayload), id.maxPayload)
	c.user = id
	c.authed.Store(id)
	c.needAuth = false
	c.parser.connectFirst = false
	c.setPermissions(id)
	c.mu.Lock()
	c.replies = nil
	if p := id.perms; p != nil && p.responses != nil && c.subs != nil {
		c.replies = make(map[string]replyGrant)
	}
	c.mu.Unlock()
	if c.pendingAuth.CompareAndSwap(true, false) {
		c.srv.unauthenticated.Add(-1)
	}
	// c.log is read by other goroutines (close, timers): it is not
	// changed here; the lines about what the user did name it.
	c.log.Debug("client authenticated", "user", id.name)
	return nil
}

// setPermissions takes id's publish and subscribe rules for the ops the
// reader handles from now on.
func (c *conn) setPermissions(id *identity) {
	c.pubPerms, c.subPerms, c.pubCache = nil, nil, nil
	if p := id.perms; p != nil && p.hasPublishRules() {
		c.pubPerms = p
		c.pubCache = make(map[string]bool)
	}
	c.subPerms = subscribePerms(id)
}

// authNoCredentials makes a connection that started without CONNECT the
// no_auth_user, as the reference does for telnet-style clients.
func (c *conn) authNoCredentials() error {
	if !c.stopAuthTimer() {
		return errConnClosed
	}
	noAuth := c.auth().noAuth
	if noAuth == nil { // a reload took it away
		return errAuthViolation
	}
	return c.becomeUser(noAuth.id)
}

// pubAllowed reports whether the connection may publish to subject. Only
// connections with publish rules call it. Decisions are cached per
// subject, except refusals under allow_responses: there the subject may
// be a reply granted later, and each use spends its grant.
// see BenchmarkParsePub
func (c *conn) pubAllowed(subject []byte) bool {
	if ok, hit := c.pubCache[string(subject)]; hit {
		return ok
	}
	p := c.pubPerms
	if p.canPublish(bytesView(subject)) {
		c.cachePub(subject, true)
		return true
	}
	if p.responses != nil {
		// Not cached: a grant may arrive with the next request.
		return c.useReply(subject)
	}
	c.cachePub(subject, false)
	return false
}

func (c *conn) cachePub(subject []byte, ok bool) {
	if len(c.pubCache) >= maxPubCache {
		clear(c.pubCache)
	}
	c.pubCache[string(subject)] = ok
}

// useReply spends one publish of a reply grant for subject.
func (c *conn) useReply(subject []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.replies[string(subject)]
	if !ok {
		return false
	}
	if !g.expires.IsZero() && time.Now().After(g.expires) {
		delete(c.replies, string(subject))
		return false
	}
	if g.left > 0 {
		g.left--
		if g.left == 0 {
			delete(c.replies, string(subject))
			return true
		}
	}
	c.replies[string(subject)] = g
	return true
}

// grantReply lets the connection answer a request delivered to it, under
// p's allow_responses; a reply it may publish to anyway needs no grant.
// It runs on the publisher's goroutine.
func (c *conn) grantReply(p *permissions, reply []byte) {
	if p.canPublish(bytesView(reply)) {
		return
	}
	now := time.Now()
	g := replyGrant{left: p.responses.MaxMsgs, expires: p.responseExpiry(now)}
	if g.left < 0 {
		g.left = -1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.replies == nil { // closed or re-authenticated
		return
	}
	c.replies[string(reply)] = g
	if len(c.replies)%replyPruneEvery == 0 {
		for k, old := range c.replies {
			if !old.expires.IsZero() && now.After(old.expires) {
				delete(c.replies, k)
			}
		}
	}
}

// pubViolation tells the client, as the reference does, that it may not
// publish to subject; the connection stays open.
func (c *conn) pubViolation(subject []byte) {
	c.queueControl("-ERR 'Permissions Violation for Publish to " + strconv.Quote(string(subject)) + "'\r\n")
	c.log.Warn("publish violation", "user", c.userName(), "subject", string(subject))
}

// subViolation tells the client it may not subscribe; the connection
// stays open.
func (c *conn) subViolation(subject, queue []byte) {
	text := "Permissions Violation for Subscription to " + strconv.Quote(string(subject))
	if len(queue) > 0 {
		text += " using queue " + strconv.Quote(string(queue))
	}
	c.queueControl("-ERR '" + text + "'\r\n")
	c.log.Warn("subscription violation", "user", c.userName(), "subject", string(subject), "queue", string(queue))
}

// userName is the authenticated user's name for logs, "" if none.
// Reader-owned, as c.user.
func (c *conn) userName() string {
	if c.user == nil {
		return ""
	}
	return c.user.name
}
