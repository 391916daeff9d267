package server

import (
	"strings"
	"sync"
	"time"
)

// DefaultMaxClosedClients is how many closed connections /connz keeps
// (state=closed), as the reference keeps: the oldest is dropped first.
const DefaultMaxClosedClients = 10000

// closedConn is a connection as it was when it closed. Immutable once in
// the ring.
type closedConn struct {
	info ConnInfo    // with Stop and Reason
	subs []SubDetail // every subscription it had
	user string      // authorized_user
}

// closedRing keeps the last max closed connections, oldest first. Safe
// for concurrent use.
type closedRing struct {
	mu    sync.Mutex // guards the fields below
	conns []*closedConn
	next  int // where the next one goes once conns is full
	max   int
}

func newClosedRing(max int) *closedRing { return &closedRing{max: max} }

func (r *closedRing) add(cc *closedConn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.max <= 0 {
		return
	}
	if len(r.conns) < r.max {
		r.conns = append(r.conns, cc)
		return
	}
	r.conns[r.next] = cc
	r.next = (r.next + 1) % r.max
}

// list returns the closed connections, oldest first. The slice is the
// caller's; the entries are shared and must not be changed.
func (r *closedRing) list() []*closedConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*closedConn, 0, len(r.conns))
	out = append(out, r.conns[r.next:]...)
	return append(out, r.conns[:r.next]...)
}

// clientDesc is who a client said it is in CONNECT, kept for /connz.
type clientDesc struct {
	name, lang, version string
	user                string // authorized_user: user name or nkey; tokens are redacted
	mqttClient          string // an MQTT client's client id, for /connz mqtt_client
}

func newClientDesc(o *connectOptions) clientDesc {
	d := clientDesc{name: o.Name, lang: o.Lang, version: o.Version}
	switch {
	case o.Nkey != "":
		d.user = o.Nkey
	case o.User != "":
		d.user = o.User
	case o.Token != "":
		d.user = "[REDACTED]" // as the reference shows a token user
	}
	return d
}

// connectedMonitor records what /connz shows of a client once its CONNECT
// is read: who it says it is, the first round-trip estimate (accept to
// CONNECT, as the reference estimates it) and its first activity.
func (c *conn) connectedMonitor(d clientDesc) {
	now := time.Now()
	c.mu.Lock()
	c.desc = d
	c.rtt = max(now.Sub(c.start), time.Nanosecond)
	c.mu.Unlock()
	c.lastActivity.Store(now.UnixNano())
}

// closedInfo snapshots a connection that is closing, for the ring. subs
// is the subscription map close took from it, which nothing changes
// any more.
func (c *conn) closedInfo(reason string, rtt time.Duration, d clientDesc, subs map[string]*subscription) *closedConn {
	now := time.Now()
	ci := c.connInfo(now, rtt, d, len(subs))
	ci.Stop = &now
	ci.Reason = closedReason(reason)
	cc := &closedConn{info: ci, user: d.user}
	for _, sub := range subs {
		sd := sub.detail()
		sd.Account, sd.AccountTag = globalAccount, globalAccount
		cc.subs = append(cc.subs, sd)
	}
	if ci.Reason == "Stale Connection" {
		c.srv.mon.stale.Add(1)
	}
	return cc
}

// closedReason spells why a connection closed as the reference's /connz
// does: bus's reasons are its -ERR texts and error details.
func closedReason(reason string) string {
	switch reason {
	case errAuthViolation.text:
		return "Authentication Failure"
	case errMaxPayload.text:
		return "Maximum Message Payload Exceeded"
	case errMaxConnections.text:
		return "Maximum Connections Exceeded"
	case errMaxControlLine.text:
		return "Maximum Control Line Exceeded"
	case errBadClientProtocol.text:
		return "Bad Client Protocol Version"
	case errNoRespNeedsHeaders.text:
		return "No Responders Requires Headers"
	case errUnknownOp.text:
		return "Parse Error"
	case "TLS Handshake Error":
		return "TLS Handshake Failure"
	}
	for _, prefix := range []string{"Read Error", "Write Error"} {
		if strings.HasPrefix(reason, prefix) {
			return prefix
		}
	}
	if strings.HasPrefix(reason, "Protocol Error") {
		return "Parse Error"
	}
	return reason
}
