package server

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/server/monitor"
)

// DefaultConnListSize is /connz's limit when none is asked for, as in the
// reference.
const DefaultConnListSize = 1024

// globalAccount is the account of the users outside the accounts block,
// named as the reference names it.
const globalAccount = "$G"

// The /connz document and its options (see server/monitor).
type (
	ConnState    = monitor.ConnState
	ConnzOptions = monitor.ConnzOptions
	Connz        = monitor.Connz
	ConnInfo     = monitor.ConnInfo
	SubDetail    = monitor.SubDetail
)

// The states of /connz's state parameter (open, closed, all or any).
const (
	ConnOpen   = monitor.ConnOpen
	ConnClosed = monitor.ConnClosed
	ConnAll    = monitor.ConnAll
)

// detail describes a client's subscription; Msgs counts deliveries.
func (sub *subscription) detail() SubDetail {
	msgs, limit := sub.delivered.Load(), sub.max.Load()
	if limit > 0 {
		msgs = min(msgs, limit)
	}
	return SubDetail{Subject: sub.subject, Queue: sub.queue, Sid: string(sub.sid), Msgs: msgs, Max: limit, Cid: sub.conn.id}
}

// connzSorts are the sort keys, as the reference names them: cid and
// start ascend, uptime and reason ascend, every other key descends.
var connzSorts = map[string]func(a, b *ConnInfo, now time.Time) int{
	"cid":        func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(a.Cid, b.Cid) },
	"start":      func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(a.Cid, b.Cid) },
	"subs":       func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(b.NumSubs, a.NumSubs) },
	"pending":    func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(b.Pending, a.Pending) },
	"msgs_to":    func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(b.OutMsgs, a.OutMsgs) },
	"msgs_from":  func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(b.InMsgs, a.InMsgs) },
	"bytes_to":   func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(b.OutBytes, a.OutBytes) },
	"bytes_from": func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(b.InBytes, a.InBytes) },
	"last":       func(a, b *ConnInfo, _ time.Time) int { return b.LastActivity.Compare(a.LastActivity) },
	"idle":       func(a, b *ConnInfo, _ time.Time) int { return a.LastActivity.Compare(b.LastActivity) },
	"uptime":     func(a, b *ConnInfo, now time.Time) int { return cmp.Compare(connUp(a, now), connUp(b, now)) },
	"stop":       func(a, b *ConnInfo, _ time.Time) int { return b.Stop.Compare(*a.Stop) },
	"reason":     func(a, b *ConnInfo, _ time.Time) int { return strings.Compare(a.Reason, b.Reason) },
	"rtt":        func(a, b *ConnInfo, _ time.Time) int { return cmp.Compare(b.RoundTrip, a.RoundTrip) },
}

// connUp is how long the connection was or has been open.
func connUp(ci *ConnInfo, now time.Time) time.Duration {
	if ci.Stop != nil {
		return ci.Stop.Sub(ci.Start)
	}
	return now.Sub(ci.Start)
}

// Errors of /connz's options; the handler answers them with 400.
var (
	ErrConnzSort      = errors.New("monitoring: unknown sort key")
	ErrConnzOnlyClose = errors.New("monitoring: this sort needs state=closed")
)

// Connz lists connections as /connz does. It returns an error wrapping
// ErrConnzSort or ErrConnzOnlyClose for options it cannot serve.
func (s *Server) Connz(o ConnzOptions) (*Connz, error) {
	if o.Sort == "" {
		o.Sort = "cid"
	}
	less, ok := connzSorts[o.Sort]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrConnzSort, o.Sort)
	}
	if (o.Sort == "stop" || o.Sort == "reason") && o.State != ConnClosed {
		return nil, fmt.Errorf("%w: sort=%s", ErrConnzOnlyClose, o.Sort)
	}
	if o.Limit <= 0 {
		o.Limit = DefaultConnListSize
	}
	if o.CID > 0 {
		o.Limit = 1
	}
	o.Offset = max(o.Offset, 0)
	now := time.Now()
	out := &Connz{ServerID: s.id, Now: now.UTC(), Offset: o.Offset, Limit: o.Limit, Conns: []*ConnInfo{}}
	if o.Account != "" && s.lookupAccount(o.Account) == nil {
		return out, nil
	}
	// As in the reference, total counts the connections of the state
	// asked for before the cid and user filters.
	var list []*ConnInfo
	skipped := 0 // of the offset, connections left out before being described
	if o.State != ConnClosed {
		s.mu.Lock()
		all := make([]*conn, 0, len(s.conns))
		for _, c := range s.conns {
			all = append(all, c)
		}
		s.mu.Unlock()
		open := make([]*conn, 0, len(all))
		for _, c := range all {
			if o.Account != "" && !accountSelected(o.Account, c.lockedAccountName()) {
				continue // not of the account: not counted either
			}
			out.Total++
			if o.CID == 0 || c.id == o.CID {
				open = append(open, c)
			}
		}
		if pagedByCid(o) {
			// The page is known from the cids alone: describe only its
			// connections, not every one (the dashboard asks for the
			// first 100 every 2 s, whatever the number of devices).
			slices.SortFunc(open, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
			lo, hi := page(len(open), o.Offset, o.Limit)
			open, skipped = open[lo:hi], lo
		}
		for _, c := range open {
			if ci := c.openInfo(now, o); ci != nil {
				list = append(list, ci)
			}
		}
	}
	if o.State != ConnOpen {
		closed := s.mon.closed.list()
		for _, cc := range closed {
			if accountSelected(o.Account, cc.info.Account) {
				out.Total++
			}
		}
		for _, cc := range closed {
			if o.CID != 0 && cc.info.Cid != o.CID || o.User != "" && cc.user != o.User || !accountSelected(o.Account, cc.info.Account) ||
				o.MQTTClient != "" && cc.info.MQTTClient != o.MQTTClient {
				continue
			}
			if o.CID != 0 && len(list) > 0 {
				break // open wins, as in the reference
			}
			list = append(list, cc.view(o))
		}
	}
	slices.SortFunc(list, func(a, b *ConnInfo) int { return cmp.Compare(a.Cid, b.Cid) })
	slices.SortStableFunc(list, func(a, b *ConnInfo) int { return less(a, b, now) })
	lo, hi := page(len(list), o.Offset-skipped, o.Limit)
	out.Conns = append(out.Conns, list[lo:hi]...)
	out.NumConns = len(out.Conns)
	return out, nil
}

// pagedByCid says o's page of open connections follows from their cids:
// sorted by cid (or start, the same order), with no filter that reads a
// connection's description (user, MQTT client id).
func pagedByCid(o ConnzOptions) bool {
	return o.State == ConnOpen && (o.Sort == "cid" || o.Sort == "start") && o.User == "" && o.MQTTClient == ""
}

// openInfo describes an open connection for o, or returns nil when o's
// user filter leaves it out.
func (c *conn) openInfo(now time.Time, o ConnzOptions) *ConnInfo {
	c.mu.Lock()
	rtt, d, n := c.rtt, c.desc, len(c.subs)
	var subs []SubDetail
	if o.Subs || o.SubsDetail {
		for _, sub := range c.subs {
			subs = append(subs, sub.detail())
		}
	}
	account, nameTag := c.accountName(), c.acc.nameTag
	c.mu.Unlock()
	if o.User != "" && d.user != o.User || !accountSelected(o.Account, account) || o.MQTTClient != "" && d.mqttClient != o.MQTTClient {
		return nil
	}
	ci := c.connInfo(now, rtt, d, n)
	setSubs(&ci, subs, o)
	if o.Auth {
		ci.Account = account // left out for the global account, as by the reference
		ci.AuthorizedUser = d.user
		ci.NameTag = cmp.Or(nameTag, account, globalAccount)
		ci.JWT, ci.IssuerKey = c.authed.Load().credentialInfo(account)
	}
	return &ci
}

// credentialInfo is what /connz shows of how id was issued, as the
// reference: a JWT user's JWT (none for a bearer token, which is all a
// client needs to connect) and the key that signed it; for a user of
// the configuration's nkeys only its account as the issuer.
func (id *identity) credentialInfo(account string) (userJWT, issuerKey string) {
	switch {
	case id == nil:
		return "", ""
	case id.fromJWT && id.bearer:
		return "", id.issuer
	case id.fromJWT:
		return id.secret, id.issuer
	case id.nkey != "":
		return "", cmp.Or(account, globalAccount)
	}
	return "", ""
}

// view is a closed connection's ConnInfo for o: a copy, so the ring's
// entry stays as it was.
func (cc *closedConn) view(o ConnzOptions) *ConnInfo {
	ci := cc.info
	setSubs(&ci, cc.subs, o)
	if o.Auth {
		ci.AuthorizedUser = cc.user
	} else {
		ci.Account = ""
	}
	return &ci
}

// setSubs fills the subscription list o asks for, sorted by subject and
// sid so that a listing is repeatable (the reference's order is a map's).
func setSubs(ci *ConnInfo, subs []SubDetail, o ConnzOptions) {
	if len(subs) == 0 || !o.Subs && !o.SubsDetail {
		return
	}
	subs = slices.Clone(subs)
	slices.SortFunc(subs, func(a, b SubDetail) int {
		return cmp.Or(strings.Compare(a.Subject, b.Subject), strings.Compare(a.Sid, b.Sid))
	})
	if o.SubsDetail {
		ci.SubsDetail = subs
		return
	}
	for _, sd := range subs {
		ci.Subs = append(ci.Subs, sd.Subject)
	}
}

// connInfo is the part of a ConnInfo read from fields that need no lock
// of c's (immutable, atomic or the queue's own). rtt and d were read under
// c.mu by the caller.
func (c *conn) connInfo(now time.Time, rtt time.Duration, d clientDesc, numSubs int) ConnInfo {
	outMsgs, outBytes := c.out.counts()
	last := c.start
	if ns := c.lastActivity.Load(); ns != 0 {
		last = time.Unix(0, ns)
	}
	ci := ConnInfo{
		Cid: c.id, Kind: "Client", Type: "nats", IP: c.ip,
		Start: c.start.UTC(), LastActivity: last.UTC(),
		RTT: rttString(rtt), Uptime: monitor.Uptime(now.Sub(c.start)), Idle: monitor.Uptime(now.Sub(last)),
		Pending: c.out.pending(),
		InMsgs:  c.inMsgs.Load(), InBytes: c.inBytes.Load(), OutMsgs: outMsgs, OutBytes: outBytes,
		NumSubs: uint32(numSubs),
		Name:    d.name, Lang: d.lang, Version: d.version,
		RoundTrip: rtt,
	}
	if c.ws {
		ci.Type = "websocket" // the reference's type for its WebSocket clients
	}
	if c.mqtt != nil {
		ci.Type, ci.MQTTClient = "mqtt", d.mqttClient
	}
	if addr, ok := c.raw.RemoteAddr().(*net.TCPAddr); ok {
		ci.Port = addr.Port
	}
	// nc is the TLS connection once the writer runs (startWriter comes
	// after the handshake), and is not changed after.
	if c.writing.Load() {
		if tc, ok := c.nc.(*tls.Conn); ok {
			cs := tc.ConnectionState()
			ci.TLSVersion = tlsVersionName(cs.Version)
			ci.TLSCipher = tls.CipherSuiteName(cs.CipherSuite)
		}
	}
	return ci
}

// rttString rounds as the reference shows a round trip: to the
// microsecond below a millisecond.
func rttString(d time.Duration) string {
	if d > time.Microsecond && d < time.Millisecond {
		d = d.Truncate(time.Microsecond)
	}
	return d.String()
}

func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "1.0"
	case tls.VersionTLS11:
		return "1.1"
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return fmt.Sprintf("Unknown [0x%x]", v)
}

// page is offset and limit applied to n items: the half-open range
// [lo, hi) of what to return. A negative offset counts as 0.
func page(n, offset, limit int) (lo, hi int) {
	lo = min(max(offset, 0), n)
	return lo, lo + min(limit, n-lo)
}
