package server

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"github.com/bus-dev/bus/subjects"
)

// subscription is one SUB of one connection. The trie holds pointers to
// it; publishers on any connection read it concurrently.
type subscription struct {
	conn    *conn          // nil for the server's own subscriptions
	handler msgHandler     // set instead of conn for the server's own
	request RequestHandler // or this, for those that check the publisher's rights
	subject string
	queue   string // "" for a plain subscription
	// remote marks a leaf link's subscription: interest its hub
	// announced (LS+), which conn's leaf link carries across.
	remote bool
	// noHeaders marks a subscription of a client that did not ask for
	// headers in CONNECT (or of a server with no_header_support): it gets
	// messages without their header block, as in the reference.
	noHeaders bool
	// capture marks a stream's capture subscription (request is set):
	// the one internal subscription a trace-only publish reaches
	// (msgtrace.go).
	capture bool
	// imported marks the server's subscriptions of an import
	// (imports.go); hop is then what forwards a message that came through
	// hops imports already, so chains of imports are followed (bounded by
	// maxImportHops) with the count carried along.
	imported bool
	hop      importHop
	// reach is where a stream import's subscription delivers, for
	// JetStream's interest checks (importreach.go); nil for any other.
	reach *streamReach
	sid   []byte // exactly as the client sent it
	// rights are the subscriber's permissions when they limit what it may
	// receive, else nil; a config reload swaps them (reload.go).
	rights atomic.Pointer[subRights]

	// mqttQoS is an MQTT subscription's granted QoS: above 0, a message
	// an MQTT client published at QoS 1 comes through the subscription's
	// consumer instead (mqttqos.go).
	mqttQoS atomic.Uint32

	max       atomic.Int64 // auto-unsubscribe after this many deliveries; 0 = none
	delivered atomic.Int64 // deliveries since SUB, for UNSUB <sid> <max>
}

// subRights are a subscription's permissions: perms, and filtered when a
// deny entry overlaps the subject, so each delivery is checked (see
// permissions.needsDeliveryFilter). Immutable.
type subRights struct {
	perms    *permissions
	filtered bool
}

func newSubRights(p *permissions, subject, queue string) *subRights {
	return &subRights{perms: p, filtered: p.needsDeliveryFilter(subject, queue)}
}

// msgHandler receives messages on a server-internal subscription (the
// JetStream API, stream capture, acks). It runs on the publisher's reader
// goroutine: it must copy what it keeps and must not block for long. It
// reports whether it took the message; one it declines does not count as
// received (so a request may get the no-responders status).
type msgHandler func(subject, reply []byte, hdr int, msg []byte) bool

// publish routes one message from a client to every matching
// subscription: a copy to each plain subscriber and one to a member of each
// queue group. It returns how many subscriptions were handed the message.
// see BenchmarkPublishFanout
func (c *conn) publish(subject, reply []byte, hdr int, msg []byte) int {
	return c.srv.route(c, subject, subject, reply, hdr, msg)
}

// route delivers a message from c, or from the server itself when c is
// nil, to every subscription matching to. The message carries subject,
// which differs from to only for JetStream deliveries: those go to the
// puller's inbox but show the stored message's subject.
func (s *Server) route(c *conn, to, subject, reply []byte, hdr int, msg []byte) int {
	trie := s.subs
	if c != nil {
		trie = c.trie // the connection's account's
	}
	return s.routeIn(trie, c, to, subject, reply, hdr, msg)
}

// routeIn is route within one subject space: the server's own answers
// to system account users go through the system account's trie.
func (s *Server) routeIn(trie *subjects.Trie[*subscription], c *conn, to, subject, reply []byte, hdr int, msg []byte) int {
	return s.routeFrom(trie, c, to, subject, reply, hdr, msg, 0)
}

// routeFrom is routeIn for a message that may have come through hops
// imports (0: straight from c), which goes on through further imports
// while the chain is shorter than maxImportHops.
func (s *Server) routeFrom(trie *subjects.Trie[*subscription], c *conn, to, subject, reply []byte, hdr int, msg []byte, hops int) int {
	r := trie.Match(to)
	echo := c == nil || c.opts.echo
	// A stored message shown on its own subject while delivered to an
	// inbox: its subject is checked against the receiver's rights too.
	stored := c == nil && !s.opts.Authorization.ReferenceStoredReads && string(to) != string(subject)
	// What came over a leaf link goes to this server's subscribers only,
	// and to queue groups only those the hub named (leafroute.go).
	fromLeaf := c != nil && c.leaf != nil
	var links *leafFanout // the leaf links the message crosses; nil: none yet
	delivered := 0
	for _, sub := range r.Plain {
		if sub.remote {
			if !fromLeaf {
				links = takeFanout(c, links)
				links.addPlain(sub.conn, to, subject)
			}
			continue
		}
		if !echo && sub.conn == c {
			continue
		}
		if sub.imported {
			// An import matches on to and forwards what the message
			// shows: for a JetStream delivery, the inbox and the stored
			// subject (imports.go).
			if hops < maxImportHops && !c.tracingOnly() && sub.hop(c, hops, to, subject, reply, hdr, msg) {
				delivered++
			}
			continue
		}
		if r := sub.rights.Load(); r != nil && !r.mayReceive(sub.queue, subject, stored) {
			continue
		}
		if c.deliver(sub, subject, reply, hdr, msg) {
			delivered++
		}
	}
	groups := r.Queues
	for i := range groups {
		name := groups[i].Name
		if namedBefore(groups, i) {
			continue // delivered with the first group of that name
		}
		if fromLeaf && !c.leaf.namedQueue(name) {
			continue
		}
		// The reference has one group per queue name, whatever the
		// patterns ("a.*" and "a.>" in queue q are one group): pick one
		// member among all the groups of that name.
		total := len(groups[i].Members)
		for j := i + 1; j < len(groups); j++ {
			if groups[j].Name == name {
				total += len(groups[j].Members)
			}
		}
		start := rand.IntN(total) // the reference picks at random too
		var remote *subscription  // a hub's member, taken when no local one is
		taken := false
		for k := range total {
			sub := queueMember(groups, i, (start+k)%total)
			if sub.remote {
				if remote == nil && !fromLeaf {
					remote = sub
				}
				continue
			}
			if !echo && sub.conn == c {
				continue
			}
			if r := sub.rights.Load(); r != nil && !r.mayReceive(sub.queue, subject, stored) {
				continue
			}
			if c.deliver(sub, subject, reply, hdr, msg) {
				delivered++
				taken = true
				break
			}
		}
		if !taken && remote != nil {
			links = takeFanout(c, links)
			links.addQueue(remote.conn, to, subject, name)
		}
	}
	if links != nil {
		delivered += links.send(c, to, subject, reply, hdr, msg)
		links.release(c)
	}
	return delivered
}

// namedBefore reports whether a group before groups[i] has its name.
func namedBefore(groups []subjects.Group[*subscription], i int) bool {
	for j := range i {
		if groups[j].Name == groups[i].Name {
			return true
		}
	}
	return false
}

// queueMember is the n-th member of the groups named like groups[first],
// counting from groups[first] on.
func queueMember(groups []subjects.Group[*subscription], first, n int) *subscription {
	name := groups[first].Name
	for j := first; j < len(groups); j++ {
		if groups[j].Name != name {
			continue
		}
		if m := groups[j].Members; n < len(m) {
			return m[n]
		} else {
			n -= len(m)
		}
	}
	panic("server: queue member out of range") // total counted these groups
}

// deliver queues one message on a subscription's connection, honouring
// auto-unsubscribe and the slow-consumer limit. sub is never an
// import's: routeFrom forwards those itself.
// c is the publishing connection, or nil for the server itself.
func (c *conn) deliver(sub *subscription, subject, reply []byte, hdr int, msg []byte) bool {
	if c != nil && c.msgTrace != nil {
		return c.deliverTraced(c.msgTrace, sub, subject, reply, hdr, msg)
	}
	if sub.handler != nil {
		return sub.handler(subject, reply, hdr, msg)
	}
	if sub.request != nil {
		return sub.request(c.rights(), subject, reply, hdr, msg)
	}
	if hdr >= 0 && sub.mqttQoS.Load() > 0 && mqttStoredQoS(msg[:hdr]) {
		return false // it comes through the subscription's consumer
	}
	n := sub.delivered.Add(1)
	limit := sub.max.Load()
	if limit > 0 && n > limit {
		return false
	}
	if hdr >= 0 && sub.noHeaders {
		msg, hdr = msg[hdr:], -1
	}
	to := sub.conn
	if r := sub.rights.Load(); r != nil && r.perms.responses != nil && len(reply) > 0 {
		to.grantReply(r.perms, reply)
	}
	if t := to.srv.tracer.Load(); t != nil {
		to.traceDeliver(t, subject, sub.sid, reply, hdr, msg)
	}
	var res appendResult
	if to.mqtt != nil {
		if mqttHidden(sub.subject, subject) {
			return false
		}
		res = to.out.appendPublish(subject, hdr, msg)
	} else {
		res = to.out.appendMsg(subject, sub.sid, reply, hdr, msg)
	}
	if res.overLimit {
		to.slowConsumer()
		return false
	}
	queued := res.queued
	if queued {
		if c != nil {
			c.deferWake(to)
			if res.stall != nil && to != c {
				c.stallOn = res.stall
			}
		} else {
			to.out.signal()
		}
	}
	if limit > 0 && n == limit {
		to.removeSub(sub)
	}
	return queued
}

// mayReceive is the delivery-time permission check of a subscription
// with perms: a message on a denied subject that a wildcard or queue
// subscription overlaps is dropped, as in the reference; and a stored
// message is dropped unless the user may subscribe to its subject.
func (r *subRights) mayReceive(queue string, subject []byte, stored bool) bool {
	if r.filtered && r.perms.deniedDelivery(subject, queue) {
		return false
	}
	return !stored || r.perms.canReceiveStored(subject)
}

// sendNoResponders answers a request nobody received with the 503 status,
// delivered to the requester's own subscription on the reply subject.
func (c *conn) sendNoResponders(subject, reply []byte) {
	r := c.trie.Match(reply)
	var sub *subscription
	for _, s := range r.Plain {
		if s.conn == c {
			sub = s
			break
		}
	}
	if sub == nil {
		return
	}
	h := append(c.scratch[:0], "NATS/1.0 503\r\nNats-Subject: "...)
	h = append(h, subject...)
	h = append(h, "\r\n\r\n"...)
	c.scratch = h
	c.deliver(sub, reply, nil, len(h), h)
}

func (c *conn) processPub(o *op) error {
	if o.hdr >= 0 && !c.opts.Headers {
		return errMalformed
	}
	if c.opts.pedantic && !subjects.ValidLiteralBytes(o.subject) {
		c.sendErr(errInvalidPubSubject) // the reference still routes it
	}
	c.inMsgs.Add(1)
	c.inBytes.Add(int64(len(o.msg)))
	var mt *msgTrace // a traced publish (msgtrace.go)
	if o.hdr >= 0 && bytes.Contains(o.msg[:o.hdr], traceDestHeaderBytes) {
		var skip bool
		if mt, skip = c.startMsgTrace(o); skip {
			return nil
		}
	}
	// As in the reference, a mapping applies first: what follows sees the
	// mapped subject (empty for a dropped message).
	subject := o.subject
	subject = c.acc.mapper.apply(subject) // each account has its own mappings
	if mt != nil && string(subject) != string(o.subject) {
		mt.mapped(subject)
	}
	// In the reference's order: reserved subjects, permissions, reserved
	// replies; a refused message gets no +OK.
	if reservedPublish(subject) || c.pubPerms != nil && !c.pubAllowed(subject) {
		c.pubViolation(subject)
		if mt != nil {
			mt.refused("Permissions Violation for Publish to " + strconv.Quote(string(subject)))
			mt.send()
		}
		return nil
	}
	if reservedReply(o.reply) {
		c.replyViolation(o.reply)
		if mt != nil {
			mt.refused("Permissions Violation for Publish with Reply of " + strconv.Quote(string(o.reply)))
			mt.send()
		}
		return nil
	}
	c.ok()
	var n int
	if mt != nil {
		n = c.publishTraced(mt, subject, o.reply, o.hdr, o.msg)
	} else {
		n = c.publish(subject, o.reply, o.hdr, o.msg)
	}
	if n == 0 && len(o.reply) > 0 && c.opts.NoResponders {
		c.sendNoResponders(subject, o.reply)
	}
	return nil
}

func (c *conn) processSub(o *op) error {
	p := c.subPerms
	if p != nil && !p.canSubscribe(bytesView(o.subject), bytesView(o.queue)) || string(o.queue) == systemQueue {
		c.subViolation(o.subject, o.queue)
		return nil
	}
	if !subjects.ValidSubjectBytes(o.subject) {
		c.sendErr(errInvalidSubject)
		return nil
	}
	c.mu.Lock()
	if c.subs == nil {
		c.mu.Unlock()
		return nil
	}
	// The limit is checked first, as in the reference, so a repeated sid
	// at the limit is refused too.
	if limit := lowerLimit(lowerLimit(c.srv.liveOpts().MaxSubscriptions, c.acc.limits.Load().MaxSubscriptions), c.userMaxSubs()); limit > 0 && len(c.subs) >= limit {
		c.mu.Unlock()
		c.sendErr(errMaxSubscriptions)
		return nil
	}
	if _, dup := c.subs[string(o.sid)]; dup { // first SUB with a sid wins
		c.mu.Unlock()
		c.ok()
		return nil
	}
	sub := &subscription{
		conn:      c,
		subject:   string(o.subject),
		queue:     string(o.queue),
		noHeaders: !c.opts.Headers,
		sid:       append([]byte(nil), o.sid...),
	}
	if p != nil {
		sub.rights.Store(newSubRights(p, sub.subject, sub.queue))
	}
	err := c.trie.Insert(sub.subject, sub.queue, sub)
	if err == nil {
		c.subs[string(sub.sid)] = sub
		c.srv.interestChanged(c.trie, sub, 1)
		c.srv.watchers.changed(sub.subject)
	}
	c.mu.Unlock()
	if err != nil {
		c.sendErr(errInvalidSubject)
		return nil
	}
	c.ok()
	return nil
}

func (c *conn) processUnsub(o *op) {
	c.mu.Lock()
	if sub := c.subs[string(o.sid)]; sub != nil {
		max := int64(o.max)
		if max > 0 {
			sub.max.Store(max)
		}
		// A publisher may deliver between the store and this check; either
		// way the subscription goes once it has delivered max messages.
		if max <= 0 || sub.delivered.Load() >= max {
			delete(c.subs, string(o.sid))
			if c.trie.Remove(sub.subject, sub.queue, sub) == nil {
				c.srv.interestChanged(c.trie, sub, -1)
			}
			c.srv.watchers.changed(sub.subject)
		}
	}
	c.mu.Unlock()
	c.ok()
}

// removeSub drops a subscription that reached its auto-unsubscribe count.
func (c *conn) removeSub(sub *subscription) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil || c.subs[string(sub.sid)] != sub {
		return
	}
	delete(c.subs, string(sub.sid))
	if c.trie.Remove(sub.subject, sub.queue, sub) == nil {
		c.srv.interestChanged(c.trie, sub, -1)
	}
	c.srv.watchers.changed(sub.subject)
}
