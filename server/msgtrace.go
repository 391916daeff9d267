package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/subjects"
)

// Message tracing, as nats-server's (and `nats trace`): a client's
// publish with a Nats-Trace-Dest header is routed as usual, and one
// event saying what happened to it is published to that subject: the
// ingress (who sent it), a subject mapping if one applied, an egress per
// subscription and leaf link it reached, and a "js" event per stream
// that captured it. With Nats-Trace-Only: true (or 1, on) the message is
// routed but delivered to no one and stored nowhere; it still crosses a
// leaf link, with a Nats-Trace-Hop header, so that the hub (which traces
// too) reports its own part, as nats-server does between servers.
//
// The reader that routes a traced publish holds it in conn.msgTrace
// while it does; deliver and the leaf fan-out check that field on every
// message (one branch each), nothing else on the way costs anything.

// Header names and values of message tracing (wire facts).
const (
	traceDestHeader     = "Nats-Trace-Dest"
	traceOnlyHeader     = "Nats-Trace-Only"
	traceHopHeader      = "Nats-Trace-Hop"
	traceDestDisabled   = "trace disabled" // not a valid subject, so never a destination
	traceKindClient     = 0                // the reference's connection kinds
	traceKindLeaf       = 4
	traceIngressType    = "in"
	traceMappingType    = "sm"
	traceEgressType     = "eg"
	traceJetStreamType  = "js"
	traceDestHeaderLine = traceDestHeader + ":"
)

var traceDestHeaderBytes = []byte(traceDestHeaderLine)

// msgTraceEvent is the event published to the trace destination.
type msgTraceEvent struct {
	Server  *sysServerInfo  `json:"server"`
	Request msgTraceRequest `json:"request"`
	Hops    int             `json:"hops,omitempty"`
	Events  []any           `json:"events"`
}

type msgTraceRequest struct {
	Header  map[string][]string `json:"header,omitempty"` // names as the client wrote them
	MsgSize int                 `json:"msgsize,omitempty"`
}

type traceBase struct {
	Type string    `json:"type"`
	TS   time.Time `json:"ts"`
}

type traceIngress struct {
	traceBase
	Kind    int    `json:"kind"`
	CID     uint64 `json:"cid"`
	Name    string `json:"name,omitempty"`
	Account string `json:"acc"`
	Subject string `json:"subj"`
	Error   string `json:"error,omitempty"`
}

type traceMapping struct {
	traceBase
	To string `json:"to"`
}

type traceEgress struct {
	traceBase
	Kind         int    `json:"kind"`
	CID          uint64 `json:"cid"`
	Name         string `json:"name,omitempty"`
	Hop          string `json:"hop,omitempty"`
	Subscription string `json:"sub,omitempty"`
	Queue        string `json:"queue,omitempty"`
	Error        string `json:"error,omitempty"`
}

type traceJetStream struct {
	traceBase
	Stream     string `json:"stream"`
	Subject    string `json:"subject,omitempty"`
	NoInterest bool   `json:"nointerest,omitempty"`
	Error      string `json:"error,omitempty"`
}

// msgTrace is one traced publish being routed.
type msgTrace struct {
	srv  *Server
	from *conn
	dest string
	only bool

	mu    sync.Mutex // guards event: a stream may complete its part elsewhere
	event msgTraceEvent
}

// traceHeaders reads a header block as nats-server does for tracing:
// every "Name: value" line, names as written; ok is false without a
// Nats-Trace-Dest, or with the one that says tracing is disabled.
func traceHeaders(hdr []byte) (map[string][]string, bool) {
	lines := strings.Split(string(hdr), "\r\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "NATS/1.0") {
		return nil, false
	}
	m := map[string][]string{}
	found := false
	for _, line := range lines[1:] {
		name, val, ok := strings.Cut(line, ":")
		val = strings.Trim(val, " \t")
		if !ok || name == "" || val == "" {
			continue
		}
		if name == traceDestHeader && !found {
			if val == traceDestDisabled {
				return nil, false
			}
			found = true
		}
		m[name] = append(m[name], val)
	}
	return m, found
}

// startMsgTrace begins tracing a publish whose headers name a trace
// destination. It returns nil when the publish is not traced after all,
// and skip when it must not be routed: a trace-only publish whose trace
// cannot be made, or one to a destination the client may not publish to
// (which gets the usual permissions violation).
func (c *conn) startMsgTrace(o *op) (mt *msgTrace, skip bool) {
	headers, ok := traceHeaders(o.msg[:o.hdr])
	if !ok {
		return nil, false
	}
	only := traceOnly(headers)
	dest := headers[traceDestHeader][0]
	if !subjects.ValidLiteral(dest) {
		c.log.Warn("message trace destination is not a valid subject; not traced", "dest", dest)
		return nil, only
	}
	if reservedPublish([]byte(dest)) || c.pubPerms != nil && !c.pubAllowed([]byte(dest)) {
		c.pubViolation([]byte(dest))
		return nil, true
	}
	account := c.acc.name
	c.mu.Lock()
	name := c.desc.name
	c.mu.Unlock()
	return newMsgTrace(c, o, headers, only, traceKindClient, name, account), false
}

// newMsgTrace is the trace of o, which c sent, with its ingress event.
func newMsgTrace(c *conn, o *op, headers map[string][]string, only bool, kind int, name, account string) *msgTrace {
	mt := &msgTrace{srv: c.srv, from: c, dest: headers[traceDestHeader][0], only: only}
	mt.event.Request = msgTraceRequest{Header: headers, MsgSize: len(o.msg)}
	mt.add(&traceIngress{traceBase: traceNow(traceIngressType), Kind: kind, CID: c.id, Name: name,
		Account: account, Subject: string(o.subject)})
	return mt
}

// startLeafTrace begins tracing a message the hub sent with a trace
// destination (it numbered the hop with Nats-Trace-Hop): bus traces its
// own part, as a nats-server leaf does, and for a trace-only message
// delivers nothing. nil when the message is not traced after all.
func (c *conn) startLeafTrace(o *op) *msgTrace {
	headers, ok := traceHeaders(o.msg[:o.hdr])
	if !ok || !subjects.ValidLiteral(headers[traceDestHeader][0]) {
		return nil
	}
	return newMsgTrace(c, o, headers, traceOnly(headers), traceKindLeaf, c.leaf.info.Name, globalAccount)
}

// traceOnly reads Nats-Trace-Only as nats-server does.
func traceOnly(headers map[string][]string) bool {
	if v := headers[traceOnlyHeader]; len(v) > 0 {
		switch strings.ToLower(v[0]) {
		case "1", "true", "on":
			return true
		}
	}
	return false
}

func traceNow(typ string) traceBase { return traceBase{Type: typ, TS: time.Now().UTC()} }

func (mt *msgTrace) add(e any) {
	mt.mu.Lock()
	mt.event.Events = append(mt.event.Events, e)
	mt.mu.Unlock()
}

// mapped records the subject a mapping sent the publish to.
func (mt *msgTrace) mapped(to []byte) {
	mt.add(&traceMapping{traceBase: traceNow(traceMappingType), To: string(to)})
}

// refused records why the publish went nowhere (a permissions
// violation) on the ingress event.
func (mt *msgTrace) refused(why string) {
	mt.mu.Lock()
	if in, ok := mt.event.Events[0].(*traceIngress); ok {
		in.Error = why
	}
	mt.mu.Unlock()
}

// publishTraced routes a traced publish and sends its event.
func (c *conn) publishTraced(mt *msgTrace, subject, reply []byte, hdr int, msg []byte) int {
	c.msgTrace = mt
	n := c.publish(subject, reply, hdr, msg)
	c.msgTrace = nil
	mt.send()
	return n
}

// send publishes the event to the destination, in the publisher's
// subject space.
func (mt *msgTrace) send() {
	mt.mu.Lock()
	mt.event.Server = mt.srv.envelope()
	data, err := json.Marshal(&mt.event)
	mt.mu.Unlock()
	if err != nil {
		mt.srv.log.Error("message trace event not encoded", "err", err)
		return
	}
	dest := []byte(mt.dest)
	mt.srv.routeIn(mt.from.trie, nil, dest, dest, nil, -1, data)
}

// tracingOnly reports whether c is routing a trace-only publish, which
// no server-owned subscription but a stream's capture takes (an import
// forwards nothing of it either).
func (c *conn) tracingOnly() bool { return c != nil && c.msgTrace != nil && c.msgTrace.only }

// deliverTraced is deliver for a traced publish: each subscription it
// reaches gets an egress event; with trace-only nothing is queued, and of
// the server's own subscriptions only streams' captures are called (they
// store nothing then).
func (c *conn) deliverTraced(mt *msgTrace, sub *subscription, subject, reply []byte, hdr int, msg []byte) bool {
	switch {
	case sub.request != nil && sub.capture:
		return sub.request(tracedRights{Rights: c.rights(), mt: mt}, subject, reply, hdr, msg)
	case sub.handler != nil || sub.request != nil:
		if mt.only {
			return false
		}
		c.msgTrace = nil // the server's own handling is not part of the trace
		defer func() { c.msgTrace = mt }()
		return c.deliver(sub, subject, reply, hdr, msg)
	}
	to := sub.conn
	to.mu.Lock()
	name := to.desc.name
	to.mu.Unlock()
	mt.add(&traceEgress{traceBase: traceNow(traceEgressType), Kind: traceKindClient, CID: to.id, Name: name,
		Subscription: sub.subject, Queue: sub.queue})
	if mt.only {
		return true // counted as delivered, as by the reference: no no-responders status
	}
	c.msgTrace = nil
	defer func() { c.msgTrace = mt }()
	return c.deliver(sub, subject, reply, hdr, msg)
}

// sendLeafTraced sends a traced publish over each leaf link of f, with a
// Nats-Trace-Hop header numbering it, trace-only or not: the hub traces
// its own part and does not deliver a trace-only message.
func (f *leafFanout) sendTraced(mt *msgTrace, c *conn, to, subject, reply []byte, hdr int, msg []byte) int {
	sent := 0
	for _, t := range f.targets {
		mt.mu.Lock()
		mt.event.Hops++
		hop := strconv.Itoa(mt.event.Hops)
		mt.mu.Unlock()
		h, m := withHeader(hdr, msg, traceHopHeader, hop)
		mt.add(&traceEgress{traceBase: traceNow(traceEgressType), Kind: traceKindLeaf, CID: t.link.id,
			Name: t.link.leaf.info.Name, Hop: hop})
		if t.link.sendLeafMsg(c, to, subject, reply, t.queues, h, m) {
			sent++
		}
	}
	return sent
}

// withHeader is the message hdr, msg with the header name: value added
// at the end of its header block.
func withHeader(hdr int, msg []byte, name, value string) (int, []byte) {
	block := msg[:hdr]
	end := bytes.LastIndex(block, []byte("\r\n\r\n"))
	if end < 0 {
		return hdr, msg
	}
	line := name + ": " + value + "\r\n"
	out := make([]byte, 0, len(msg)+len(line))
	out = append(out, block[:end+2]...)
	out = append(out, line...)
	out = append(out, block[end+2:]...)
	out = append(out, msg[hdr:]...)
	return hdr + len(line), out
}

// tracedRights is the publisher's Rights as a stream's capture gets them
// for a traced publish (jetstream.MsgTrace).
type tracedRights struct {
	Rights
	mt *msgTrace
}

var _ jetstream.MsgTrace = tracedRights{}

func (r tracedRights) Publisher() Rights { return r.Rights }
func (r tracedRights) TraceOnly() bool   { return r.mt.only }

// Stream adds the stream's event now, in routing order, and completes it
// when the stream says.
func (r tracedRights) Stream(name string) func(subject string, err error) {
	e := &traceJetStream{traceBase: traceNow(traceJetStreamType), Stream: name}
	r.mt.add(e)
	return func(subject string, err error) {
		r.mt.mu.Lock()
		defer r.mt.mu.Unlock()
		e.Subject, e.TS = subject, time.Now().UTC()
		if err != nil {
			e.Error = err.Error()
		}
	}
}
