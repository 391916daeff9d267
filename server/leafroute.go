package server

import (
	"bytes"
	"sync"
)

// Messages across leaf links. A message crosses a link at most once,
// however many of the hub's subscriptions it matches: as LMSG (HMSG with
// headers) naming the hub's queue groups it is for, and going to the
// hub's plain subscriptions in any case, as the reference does. What
// comes from a link goes to this server's subscribers only.

// leafFanout gathers, while a message is routed, the links it crosses
// and the hub queue groups it is for on each. Its zero value is empty.
// The router takes one only for a message that matches a hub's interest
// (takeFanout), so other messages pay nothing for it; a fanout is reused,
// so its targets and their queue buffers are allocated once.
type leafFanout struct {
	targets []leafTarget
}

type leafTarget struct {
	link   *conn
	queues []byte // the hub's groups the message is for, blank-separated
}

// fanoutPool holds the fanouts of messages the server itself routes;
// a client's reader reuses the one in its conn.
var fanoutPool = sync.Pool{New: func() any { return new(leafFanout) }}

// takeFanout returns f, or when it is nil an empty fanout for a message
// published by c (nil: the server).
func takeFanout(c *conn, f *leafFanout) *leafFanout {
	switch {
	case f != nil:
		return f
	case c != nil:
		return &c.fanout
	}
	return fanoutPool.Get().(*leafFanout)
}

// release empties f for the next message, keeping its buffers.
func (f *leafFanout) release(c *conn) {
	for i := range f.targets {
		f.targets[i].link = nil
	}
	f.targets = f.targets[:0]
	if c == nil || f != &c.fanout {
		fanoutPool.Put(f)
	}
}

// target finds link's entry, adding it; nil when subject may not cross
// the link.
func (f *leafFanout) target(link *conn, to, subject []byte) *leafTarget {
	for i := range f.targets {
		if f.targets[i].link == link {
			return &f.targets[i]
		}
	}
	if !link.leaf.mayExportTo(to, subject) {
		return nil
	}
	if n := len(f.targets); n < cap(f.targets) {
		f.targets = f.targets[:n+1] // keeps the entry's queue buffer
	} else {
		f.targets = append(f.targets, leafTarget{})
	}
	t := &f.targets[len(f.targets)-1]
	t.link, t.queues = link, t.queues[:0]
	return t
}

// addPlain notes that a plain subscription of link's hub matches: the
// message crosses, and reaches the hub's plain subscriptions.
func (f *leafFanout) addPlain(link *conn, to, subject []byte) { f.target(link, to, subject) }

// addQueue notes that the message is for the hub's queue group queue.
func (f *leafFanout) addQueue(link *conn, to, subject []byte, queue string) {
	t := f.target(link, to, subject)
	if t == nil {
		return
	}
	if len(t.queues) > 0 {
		t.queues = append(t.queues, ' ')
	}
	t.queues = append(t.queues, queue...)
}

// send queues the message on every gathered link and reports how many
// took it. c is the publisher (nil for the server), whose reader wakes
// the links' writers once its read is done.
func (f *leafFanout) send(c *conn, to, subject, reply []byte, hdr int, msg []byte) int {
	if c != nil && c.msgTrace != nil {
		return f.sendTraced(c.msgTrace, c, to, subject, reply, hdr, msg)
	}
	sent := 0
	for _, t := range f.targets {
		if t.link.sendLeafMsg(c, to, subject, reply, t.queues, hdr, msg) {
			sent++
		}
	}
	return sent
}

// sendLeafMsg queues one message on leaf link l. A link over its pending
// limit is cut, as a slow route is, and dialed again.
func (l *conn) sendLeafMsg(c *conn, to, subject, reply, queues []byte, hdr int, msg []byte) bool {
	if t := l.srv.tracer.Load(); t != nil {
		l.traceLeafOut(t, to, reply, queues, hdr, msg)
	}
	res := l.out.appendLeafMsg(to, subject, reply, queues, hdr, msg)
	if res.overLimit {
		l.slowConsumer()
		return false
	}
	if !res.queued {
		return false
	}
	if c != nil {
		c.deferWake(l)
	} else {
		l.out.signal()
	}
	return true
}

// appendLeafMsg formats one LMSG or HMSG frame. A JetStream delivery
// (to is the puller's inbox, subject the stored message's) names its
// own subject after an '@' at the end of its ack reply, as the reference
// carries it across links; the far side takes it off again.
func (o *outbound) appendLeafMsg(to, subject, reply, queues []byte, hdr int, msg []byte) appendResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, refused, ok := o.reserve(len(to) + len(subject) + len(reply) + len(queues) + len(msg) + 40); !ok {
		return refused
	}
	b := frameVerb(o.line[:0], hdr, "LMSG ")
	b = append(b, to...)
	b = append(b, ' ')
	if len(queues) > 0 {
		if len(reply) > 0 {
			b = append(b, "+ "...)
		} else {
			b = append(b, "| "...)
		}
	}
	if len(reply) > 0 {
		b = append(b, reply...)
		if string(to) != string(subject) && bytes.HasPrefix(reply, []byte(jsAckPrefix)) {
			b = append(b, '@')
			b = append(b, subject...)
		}
		b = append(b, ' ')
	}
	if len(queues) > 0 {
		b = append(b, queues...)
		b = append(b, ' ')
	}
	o.finishFrame(b, hdr, msg)
	return appendResult{queued: true}
}

// processLeafMsg routes a message the hub sent to this server's
// subscribers: its plain ones, and one member of each queue group the
// hub named.
func (c *conn) processLeafMsg(o *op) {
	c.inMsgs.Add(1)
	c.inBytes.Add(int64(len(o.msg)))
	if !c.leaf.mayImport(o.subject) || leafReservedReply(o.reply) {
		return
	}
	to, subject, reply := o.subject, o.subject, o.reply
	if at := jsAckDeliverAt(reply); at >= 0 {
		subject, reply = reply[at+1:], reply[:at]
	}
	c.leaf.queues = o.queues
	if o.hdr >= 0 && bytes.Contains(o.msg[:o.hdr], traceDestHeaderBytes) {
		if mt := c.startLeafTrace(o); mt != nil {
			c.msgTrace = mt
			c.srv.route(c, to, subject, reply, o.hdr, o.msg)
			c.msgTrace = nil
			c.leaf.queues = nil
			mt.send()
			return
		}
	}
	c.srv.route(c, to, subject, reply, o.hdr, o.msg)
	c.leaf.queues = nil
}

// leafReservedReply reports whether a hub's message asks for its answer
// on bus's own or the system subjects: answering would publish there
// with the link's full rights (a stream's pub ack sent to
// $BUS.DLQ.REDRIVEACK.… fakes a redrive's), and no answer could cross
// back anyway (leafDenies).
func leafReservedReply(reply []byte) bool {
	if len(reply) == 0 || reply[0] != '$' {
		return false
	}
	return bytes.HasPrefix(reply, []byte("$BUS.")) || bytes.HasPrefix(reply, []byte("$SYS."))
}

// jsAckDeliverAt is where the '@' before a JetStream delivery's own
// subject is in its ack reply, or -1: the first '@' after the eight dots
// of "$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>"
// (names may hold '@' themselves).
func jsAckDeliverAt(reply []byte) int {
	if !bytes.HasPrefix(reply, []byte(jsAckPrefix)) {
		return -1
	}
	dots := 0
	for i, b := range reply {
		switch {
		case b == '.':
			dots++
		case b == '@' && dots >= 8:
			if i == len(reply)-1 {
				return -1
			}
			return i
		}
	}
	return -1
}

// namedQueue reports whether the message being routed from the hub is
// for this server's queue group name.
func (l *leafState) namedQueue(name string) bool {
	found := false
	eachQueue(l.queues, func(q []byte) bool {
		found = string(q) == name
		return !found
	})
	return found
}
