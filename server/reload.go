package server

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ErrReloadNeedsRestart is returned by Reload when the new options change
// a setting that only a restart can: nothing is applied then.
var ErrReloadNeedsRestart = errors.New("server: reload: needs a restart")

// liveOpts are the options in force: the settings Reload may change are
// read from here, the others stay New's (s.opts). The value is never
// modified.
func (s *Server) liveOpts() *Options { return s.live.Load() }

// auth is the authenticator in force; Reload swaps it.
func (s *Server) auth() *authenticator { return s.authn.Load() }

// Reload applies new options to the running server, as nats-server's
// config reload: authorization (users, permissions, tokens, the system
// account's users), limits (max_payload, max_control_line and
// max_pending for connections made after it; max_connections,
// max_subscriptions, the ping interval and pings out, write_deadline for
// new connections), the lame-duck timings, client_advertise (in the INFO
// of connections made after it) and the TLS files, which are read again.
// Connections are not dropped, except as the reference drops them: those
// over a lowered max_connections, chosen at random, are closed with
// 'maximum connections exceeded'; one whose user is gone, has another
// password, token or account, or that has no credentials where they are
// now required, is closed with 'Authorization Violation'; the others get
// their user's new permissions, and lose (with a -ERR) the subscriptions
// those no longer allow. It logs what changed.
//
// Accounts may come and go (the connections of a removed account's users
// are closed as above) and change their users, limits (they apply to
// connections and subscriptions made after the reload), mappings (the
// next publish is routed by the new ones, the global account's too) and
// exports and imports (every import is subscribed again: one an export
// no longer allows stops at once).
//
// Settings that need a restart (listen addresses and ports, server_name,
// store_dir, jetstream (an account's jetstream and its limits change live), no_header_support, the shape of the tls block,
// reference_stored_reads, the system account's name) refuse the whole
// reload: the error wraps ErrReloadNeedsRestart and names them, and each
// is logged. A TLS file that cannot be read refuses it too.
func (s *Server) Reload(opts Options) error {
	// Held from the start: a NATS resolver's store is read below, and an
	// account JWT update between that read and the swap would be lost.
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	opts = opts.clone().WithDefaults() // the caller may reuse its slices
	if err := opts.Operator.checkPreload(); err != nil {
		return fmt.Errorf("server: reload: %w", err)
	}
	opts, err := s.withResolverStore(opts)
	if err != nil {
		return fmt.Errorf("server: reload: %w", err)
	}
	opts, err = opts.withOperator()
	if err != nil {
		return fmt.Errorf("server: reload: %w", err)
	}
	if err := opts.validate(); err != nil {
		return fmt.Errorf("server: reload: %w", err)
	}
	old := s.liveOpts()
	if keys := restartKeys(*old, opts); len(keys) > 0 {
		for _, k := range keys {
			s.log.Error("config reload refused: the setting needs a restart", "key", k)
		}
		return fmt.Errorf("%w: %s", ErrReloadNeedsRestart, strings.Join(keys, ", "))
	}
	tlsFilesChanged := false
	if opts.TLS.enabled() {
		cfg, err := loadTLS(opts.TLS)
		if err != nil {
			return fmt.Errorf("server: reload: %w", err)
		}
		tlsFilesChanged = !sameTLSFiles(s.tlsConf.Swap(cfg), cfg)
	}
	globalMappings, err := newMapper(opts.Mappings)
	if err != nil {
		return fmt.Errorf("server: reload: %w", err)
	}
	prev := s.accountSet()
	set, commitAccounts, err := s.buildAccounts(opts.Accounts, prev)
	if err != nil {
		return fmt.Errorf("server: reload: %w", err)
	}
	if s.js != nil {
		if err := s.startAccountsJetStream(opts.Accounts, set); err != nil {
			return fmt.Errorf("server: reload: %w", err)
		}
	}
	commitAccounts()
	updateAccountsJetStream(opts.Accounts, set)
	if s.js != nil {
		s.switchAccountsJetStream(opts.Accounts, set)
	}
	s.global.mapper.current.Store(globalMappings)
	s.reinstallImports(old.Accounts, opts.Accounts, prev, set)
	au, wsAu := s.newAuthenticators(&opts, set)
	opts.Logger = old.Logger
	s.live.Store(&opts)
	s.accounts.Store(&set)
	s.authn.Store(au)
	s.wsAuthn.Store(wsAu)
	s.mqttAuthn.Store(s.newMQTTAuthenticator(&opts, set))
	s.tracer.Store(newTracer(opts))
	stopRemovedJetStream(prev, set)
	changed := changedKeys(*old, opts)
	if tlsFilesChanged && !slices.Contains(changed, "tls") {
		changed = append(changed, "tls") // the same file names, new contents (a rotation)
	}
	if len(changed) == 0 {
		changed = []string{"none"} // a reload that found nothing to apply
	}
	s.log.Info("config reloaded", "changed", strings.Join(changed, ","))
	s.armActivationExpiry(opts.trust)
	if opts.MaxConnections < old.MaxConnections {
		s.closeOverLimit(opts.MaxConnections)
	}
	// An account's lowered limits { max_connections } closes its
	// connections over it, as a JWT update's does (the reference's
	// 'maximum account active connections exceeded').
	s.closeOverAccountLimits(set)
	if !reflect.DeepEqual(old.Authorization, opts.Authorization) || !reflect.DeepEqual(old.SystemAccount, opts.SystemAccount) ||
		!reflect.DeepEqual(old.Accounts, opts.Accounts) {
		if opts.trust != nil {
			s.reauthorizeJWTUsers(opts.trust) // the reference's words for revoked users
		} else {
			s.reauthorize()
		}
		if s.js != nil {
			// What users set up earlier is checked against their new
			// rights too (docs/security.md).
			s.js.RightsChanged()
			s.accountsRightsChanged()
		}
	}
	return nil
}

// restartKeys names the settings that differ between old and new and that
// only a restart can change, by their config keys.
func restartKeys(old, new Options) []string {
	var keys []string
	check := func(key string, same bool) {
		if !same {
			keys = append(keys, key)
		}
	}
	check("host", old.Host == new.Host)
	check("port", old.Port == new.Port)
	check("http_port", old.HTTPPort == new.HTTPPort)
	check("https_port", old.HTTPSPort == new.HTTPSPort)
	check("server_name", old.ServerName == new.ServerName)
	check("store_dir", old.StoreDir == new.StoreDir)
	check("jetstream", old.JetStream == new.JetStream && old.JetStreamDomain == new.JetStreamDomain &&
		old.JetStreamMaxMemory == new.JetStreamMaxMemory && old.JetStreamMaxStore == new.JetStreamMaxStore &&
		old.JetStreamSyncInterval == new.JetStreamSyncInterval && old.JetStreamIndexMemory == new.JetStreamIndexMemory &&
		old.JetStreamLimits == new.JetStreamLimits && old.JetStreamBatchLimits == new.JetStreamBatchLimits &&
		old.JetStreamEncryption == new.JetStreamEncryption)
	check("max_pending_total", old.MaxPendingTotal == new.MaxPendingTotal)
	check("leafnodes", reflect.DeepEqual(old.LeafNodes, new.LeafNodes))
	// As in the reference, the websocket block takes no reload: its
	// users and permissions are authorization's, which does.
	check("websocket", reflect.DeepEqual(old.WebSocket, new.WebSocket))
	check("mqtt", reflect.DeepEqual(old.MQTT, new.MQTT))
	check("system_account", old.SystemAccount.name() == new.SystemAccount.name())
	check("operator", sameOperators(old.Operator, new.Operator))
	check("authorization.reference_stored_reads", old.Authorization.ReferenceStoredReads == new.Authorization.ReferenceStoredReads)
	o, n := old.TLS, new.TLS
	check("no_header_support", old.NoHeaderSupport == new.NoHeaderSupport)
	check("tls", o.enabled() == n.enabled() && o.verifying() == n.verifying() && o.VerifyAndMap == n.VerifyAndMap &&
		o.HandshakeFirst == n.HandshakeFirst && o.HandshakeFirstFallback == n.HandshakeFirstFallback)
	// Whatever else Options holds is New's for good.
	rest := func(o Options) Options {
		live := Options{}
		o.Host, o.Port, o.HTTPPort, o.HTTPSPort, o.ServerName, o.StoreDir, o.JetStream, o.Mappings = live.Host, 0, 0, 0, "", "", false, nil
		o.JetStreamDomain, o.JetStreamMaxMemory, o.JetStreamMaxStore, o.JetStreamSyncInterval, o.MaxPendingTotal = "", 0, 0, 0, 0
		o.JetStreamIndexMemory = 0
		o.Authorization, o.SystemAccount, o.TLS, o.Logger = live.Authorization, live.SystemAccount, live.TLS, nil
		o.Accounts, o.Operator, o.trust = nil, nil, nil
		o.MaxPayload, o.MaxControlLine, o.MaxConnections, o.MaxSubscriptions, o.MaxPending = 0, 0, 0, 0, 0
		o.PingInterval, o.MaxPingsOut, o.WriteDeadline, o.MaxUnauthenticated, o.FirstPingDelay = 0, 0, 0, 0, 0
		o.LameDuckDuration, o.LameDuckGracePeriod = 0, 0
		o.JetStreamLimits, o.JetStreamBatchLimits, o.JetStreamEncryption = live.JetStreamLimits, live.JetStreamBatchLimits, live.JetStreamEncryption
		o.LeafNodes, o.WebSocket, o.MQTT = live.LeafNodes, live.WebSocket, live.MQTT
		o.ClientAdvertise, o.NoHeaderSupport = "", false
		o.Trace, o.TraceVerbose, o.TraceHeaders, o.MaxTracedMsgLen = false, false, false, 0
		return o
	}
	if !reflect.DeepEqual(rest(old), rest(new)) {
		keys = append(keys, "other settings of server.Options")
	}
	return keys
}

// sameExportsAndImports reports whether the accounts share what they
// shared before.
func sameExportsAndImports(old, new []Account) bool {
	shares := func(list []Account) map[string][2]any {
		out := map[string][2]any{}
		for _, a := range list {
			if len(a.Exports.Streams)+len(a.Exports.Services)+len(a.Imports.Streams)+len(a.Imports.Services) > 0 {
				out[a.Name] = [2]any{a.Exports, a.Imports}
			}
		}
		return out
	}
	return reflect.DeepEqual(shares(old), shares(new))
}

// reinstallImports subscribes every import again when the accounts'
// exports or imports, or the accounts themselves, changed (reloadMu
// held): an import an export no longer allows stops, a new one starts,
// and those of a recreated account follow its new trie.
func (s *Server) reinstallImports(old, new []Account, prev, set accountSet) {
	if sameExportsAndImports(old, new) && reflect.DeepEqual(slices.Sorted(maps.Keys(prev)), slices.Sorted(maps.Keys(set))) {
		return
	}
	s.uninstallImports()
	if err := s.installImports(new, set); err != nil {
		// The configuration validated: this is a subscription the trie
		// refused, which leaves the imports as far as they got.
		s.log.Error("accounts change: imports not all installed", "err", err)
	}
}

// changedKeys names the live settings that differ, for the log.
func changedKeys(old, new Options) []string {
	var keys []string
	add := func(key string, same bool) {
		if !same {
			keys = append(keys, key)
		}
	}
	add("authorization", reflect.DeepEqual(old.Authorization, new.Authorization))
	add("mappings", reflect.DeepEqual(old.Mappings, new.Mappings))
	add("accounts", reflect.DeepEqual(old.SystemAccount, new.SystemAccount) && reflect.DeepEqual(old.Accounts, new.Accounts))
	add("max_payload", old.MaxPayload == new.MaxPayload)
	add("max_control_line", old.MaxControlLine == new.MaxControlLine)
	add("max_connections", old.MaxConnections == new.MaxConnections)
	add("max_subscriptions", old.MaxSubscriptions == new.MaxSubscriptions)
	add("max_pending", old.MaxPending == new.MaxPending)
	add("ping_interval", old.PingInterval == new.PingInterval)
	add("max_pings_out", old.MaxPingsOut == new.MaxPingsOut)
	add("write_deadline", old.WriteDeadline == new.WriteDeadline)
	add("max_unauthenticated", old.MaxUnauthenticated == new.MaxUnauthenticated)
	add("lame_duck_duration", old.LameDuckDuration == new.LameDuckDuration)
	add("lame_duck_grace_period", old.LameDuckGracePeriod == new.LameDuckGracePeriod)
	add("tls", reflect.DeepEqual(old.TLS, new.TLS))
	add("client_advertise", old.ClientAdvertise == new.ClientAdvertise)
	add("trace", old.Trace == new.Trace)
	add("trace_verbose", old.TraceVerbose == new.TraceVerbose)
	add("trace_headers", old.TraceHeaders == new.TraceHeaders)
	add("max_traced_msg_len", old.MaxTracedMsgLen == new.MaxTracedMsgLen)
	return keys
}

// closeOverLimit closes client connections, chosen at random as by the
// reference (map order), until no more than limit remain, each with the
// -ERR a connection over the limit gets at accept.
func (s *Server) closeOverLimit(limit int) {
	s.mu.Lock()
	var over []*conn
	if n := len(s.conns) - limit; n > 0 {
		over = make([]*conn, 0, n)
		for _, c := range s.conns {
			if len(over) == n {
				break
			}
			over = append(over, c)
		}
	}
	s.mu.Unlock()
	for _, c := range over {
		c.log.Warn("connection closed by config reload: over max_connections", "max_connections", limit)
		c.closeWithErr(errMaxConnections.text, errMaxConnections.text)
	}
}

// reauthorize checks every connection against au after a reload.
func (s *Server) reauthorize() {
	conns := s.connList()
	for _, c := range conns {
		c.reauthorize(c.auth())
	}
}

// reauthorize keeps c with its user's new identity, or closes it when the
// new configuration would not let it in as it came in.
func (c *conn) reauthorize(au *authenticator) {
	old := c.authed.Load()
	if old == nil {
		// Not authenticated: still to send CONNECT (it will meet au), or
		// in since before authorization was on.
		if au.required && !c.pendingAuth.Load() {
			c.revoke("")
		}
		return
	}
	id := c.srv.withCalloutDeny(au, au.reidentify(old))
	if id == nil || id.acc != old.acc || !id.allowsConnType(c.connType()) {
		c.revoke(old.name)
		return
	}
	c.authed.Store(id)
	c.reauth.Store(id) // the reader takes the new publish rights at its next read
	c.updateSubRights(id)
}

// revoke closes a connection its user may no longer keep, with the
// reference's error.
func (c *conn) revoke(user string) {
	c.srv.authFailures.Add(1)
	c.log.Warn("authorization revoked by config reload", "user", user)
	c.closeWithErr(errAuthViolation.text, errAuthViolation.text)
}

// reidentify is the identity old has under a (a new configuration), or
// nil when a would not let it in as it came in: the same user (or nkey,
// token, single user) with the same password or token as configured.
func (a *authenticator) reidentify(old *identity) *identity {
	if !a.required {
		return &identity{}
	}
	if old.fromCallout && !old.fromJWT {
		// The callout's answer stands while a callout is configured;
		// the service is not asked again. (An operator-mode callout's
		// user JWT is checked again as any user JWT, below.)
		if a.callout == nil {
			return nil
		}
		return old
	}
	if a.jwt != nil || old.fromJWT {
		if a.jwt == nil || !old.fromJWT {
			return nil
		}
		return a.jwt.reidentify(old)
	}
	if old.single {
		if a.users == nil && (a.token != "" || a.user != "") && a.single.name == old.name && a.single.secret == old.secret {
			return a.single
		}
		return nil
	}
	var e *identityEntry
	if old.nkey != "" {
		if e = a.nkeys[old.nkey]; e == nil {
			e = a.sysNkeys[old.nkey]
		}
	} else if e = a.users[old.name]; e == nil {
		e = a.sysUsers[old.name]
	}
	if e == nil || e.password != old.secret {
		return nil
	}
	return e.id
}

// updateSubRights gives c's subscriptions id's permissions, removing with
// a -ERR, as the reference, those they no longer allow.
func (c *conn) updateSubRights(id *identity) {
	p := subscribePerms(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	for sid, sub := range c.subs {
		switch {
		case p == nil:
			sub.rights.Store(nil)
		case p.canSubscribe(sub.subject, sub.queue) && sub.queue != systemQueue:
			sub.rights.Store(newSubRights(p, sub.subject, sub.queue))
		default:
			delete(c.subs, sid)
			if c.trie.Remove(sub.subject, sub.queue, sub) == nil {
				c.srv.interestChanged(c.trie, sub, -1)
			}
			c.srv.watchers.changed(sub.subject)
			text := "Permissions Violation for Subscription to " + strconv.Quote(sub.subject)
			if sub.queue != "" {
				text += " using queue " + strconv.Quote(sub.queue)
			}
			c.out.appendControl("-ERR '" + text + " (sid " + strconv.Quote(sid) + ")'\r\n")
			c.out.signal()
			c.log.Info("subscription removed by config reload: not authorized", "subject", sub.subject, "queue", sub.queue, "sid", sid)
		}
	}
	if id.perms == nil || id.perms.responses == nil {
		c.replies = nil
	} else if c.replies == nil && c.subs != nil {
		c.replies = make(map[string]replyGrant)
	}
}

// subscribePerms are the permissions a user's subscriptions are checked
// against, nil when nothing limits them (as becomeUser decides).
func subscribePerms(id *identity) *permissions {
	if p := id.perms; p != nil && (len(p.subAllow) > 0 || len(p.subDeny) > 0 || p.responses != nil) {
		return p
	}
	return nil
}

// takeReload applies, on the reader goroutine, the identity a reload
// gave the connection: its publish and subscribe rules from now on.
func (c *conn) takeReload() {
	id := c.reauth.Swap(nil)
	if id == nil {
		return
	}
	c.user = id
	c.setPermissions(id)
}
