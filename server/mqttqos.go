package server

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/bus-dev/bus/server/mqtt"
)

// QoS 1 on JetStream, the reference's way (nats-server 2.15.2):
//
//   - A QoS 1 PUBLISH is routed with the header "Nmqtt-Pub:1" (NATS
//     subscribers get it at once, header and all), then stored in
//     $MQTT_msgs at $MQTT.msgs.<subject>; PUBACK goes out once the store
//     is acknowledged, which is once it is fsynced. A resent PUBLISH
//     (DUP) whose packet id, topic and payload were stored already is
//     acknowledged without a second store.
//   - A QoS 2 PUBLISH is the same with "Nmqtt-Pub:2" and PUBREC, and its
//     packet id is kept in the session until PUBREL, so resends are
//     routed and stored once (delivered on receipt: the spec's method
//     B; the reference holds it in $MQTT_qos2in until PUBREL, method A).
//   - A QoS 1 SUBSCRIBE is granted QoS 1 (QoS 2 too: bus delivers at
//     most QoS 1) and gets, beside its plain subscription, a durable
//     consumer on $MQTT_msgs filtered on $MQTT.msgs.<subject>, pushing
//     to $MQTT.sub.<token>. Its deliveries go out as QoS 1 PUBLISH with
//     a packet id; the PUBACK acks the stream message, and one not acked
//     within ack_wait comes again with DUP set. The plain subscription
//     skips messages that carry Nmqtt-Pub with a QoS above 0 (those come
//     through the consumer), so a NATS client's publish, which is not
//     stored, reaches a QoS 1 subscriber at QoS 0, as in the reference.
//
// Without JetStream in the account, QoS 1 is as it was before storage:
// a PUBLISH is acknowledged once routed, a SUBSCRIBE granted QoS 0, and a
// persistent session refused (docs/mqtt.md).

// mqttPublishStored routes and stores a QoS 1 or 2 PUBLISH on subject,
// then acknowledges it (PUBACK, or PUBREC for QoS 2). A QoS 2 packet id
// awaiting its PUBREL is routed and stored once, whatever the resends.
func (c *conn) mqttPublishStored(subject []byte, p *mqtt.Publish) error {
	m := c.mqtt
	st := m.session.Load()
	if p.QoS == 1 && st != nil {
		return c.mqttPublishQoS1(st, subject, p)
	}
	ack, hdr := mqtt.PUBACK, mqttQoS1Header
	if p.QoS == 2 {
		ack, hdr = mqtt.PUBREC, mqttQoS2Header
		if c.mqttReceived(st, p.PacketID) {
			c.mqttSend(mqtt.AppendAck(m.packet[:0], ack, p.PacketID))
			return nil
		}
	}
	msg := append(append(m.stored[:0], hdr...), p.Payload...)
	m.stored = msg[:0]
	mapped, routed := c.mqttRouteWith(subject, len(hdr), msg)
	if routed && st != nil {
		// The routed copies go out now, not after the store; and the
		// PUBREC must not overtake the PUBACKs of stores in flight.
		c.wakeWriters()
		if pipe := m.pipe.Load(); pipe != nil {
			if err := pipe.drain(); err != nil {
				return err
			}
		}
		if err := st.js.ensureStreams(); err != nil {
			return fmt.Errorf("%w: %w", errMQTTStore, err)
		}
		if _, err := st.js.store(mqttMsgsPrefix+string(mapped), msg[:len(hdr)], p.Payload); err != nil {
			return fmt.Errorf("%w: %w", errMQTTStore, err)
		}
	}
	if p.QoS == 2 {
		c.mqttMarkReceived(st, p.PacketID)
	}
	c.mqttSend(mqtt.AppendAck(m.packet[:0], ack, p.PacketID))
	return nil
}

// mqttPublishQoS1 routes a QoS 1 PUBLISH and hands it to the stream
// through the connection's pipe (mqttqospipe.go), which sends the PUBACK
// once it is stored. A resend (DUP) of the last publish stored under its
// packet id is acknowledged without being routed or stored again.
func (c *conn) mqttPublishQoS1(st *mqttStored, subject []byte, p *mqtt.Publish) error {
	m := c.mqtt
	pipe, err := c.mqttPipe(st.js)
	if err != nil {
		return fmt.Errorf("%w: %w", errMQTTStore, err)
	}
	digest := mqttDigest(p.Topic, p.Payload)
	if p.Dup && st.publishedAs(p.PacketID) == digest {
		pipe.ack(p.PacketID)
		return nil
	}
	msg := append(append(m.stored[:0], mqttQoS1Header...), p.Payload...)
	m.stored = msg[:0]
	mapped, routed := c.mqttRouteWith(subject, len(mqttQoS1Header), msg)
	if !routed {
		pipe.ack(p.PacketID) // dropped by the rules, acknowledged still
		return nil
	}
	c.wakeWriters() // the routed copies go out now, not after the store
	if err := st.js.ensureStreams(); err != nil {
		return fmt.Errorf("%w: %w", errMQTTStore, err)
	}
	return pipe.store(st, mqttMsgsPrefix+string(mapped), len(mqttQoS1Header), msg, p.PacketID, digest)
}

// mqttReceived says QoS 2 packet id pi was routed and stored and awaits
// its PUBREL: in the session (so across reconnects while bus runs), or
// in the connection without one.
func (c *conn) mqttReceived(st *mqttStored, pi uint16) bool {
	if st == nil {
		_, ok := c.mqtt.qos2[pi]
		return ok
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	_, ok := st.received[pi]
	return ok
}

// mqttMarkReceived records QoS 2 packet id pi as routed and stored.
func (c *conn) mqttMarkReceived(st *mqttStored, pi uint16) {
	if st == nil {
		if c.mqtt.qos2 == nil {
			c.mqtt.qos2 = map[uint16]struct{}{}
		}
		c.mqtt.qos2[pi] = struct{}{}
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.received == nil {
		st.received = map[uint16]struct{}{}
	}
	st.received[pi] = struct{}{}
}

// mqttReleased forgets QoS 2 packet id pi at its PUBREL: a PUBLISH with
// it is a new message again.
func (c *conn) mqttReleased(pi uint16) {
	st := c.mqtt.session.Load()
	if st == nil {
		delete(c.mqtt.qos2, pi)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.received, pi)
}

// errMQTTStore is a QoS 1 or 2 message JetStream did not store: the
// connection closes without the PUBACK or PUBREC, so the client sends it
// again (as the reference does on a failed store).
var errMQTTStore = errors.New("mqtt: QoS 1 message not stored")

// mqttSeed keys mqttDigest for the life of the process (the digests are
// never stored).
var mqttSeed = maphash.MakeSeed()

// mqttDigest identifies a PUBLISH's topic and payload.
func mqttDigest(topic, payload []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(mqttSeed)
	_, _ = h.Write(topic)
	_ = h.WriteByte(0)
	_, _ = h.Write(payload)
	return h.Sum64() | 1 // never 0, which is "none"
}

// publishedAs is the digest of the last QoS 1 publish stored under pi.
func (st *mqttStored) publishedAs(pi uint16) uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.published[pi]
}

func (st *mqttStored) markPublished(pi uint16, digest uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.published == nil {
		st.published = map[uint16]uint64{}
	}
	st.published[pi] = digest
}

// unmarkPublished forgets pi's digest if it is still digest (a store
// that failed: its resend must be stored).
func (st *mqttStored) unmarkPublished(pi uint16, digest uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.published[pi] == digest {
		delete(st.published, pi)
	}
}

// mqttStoredQoS says a header block carries Nmqtt-Pub with a QoS above
// 0: a message that a QoS 1 subscription gets from its consumer, not
// from its plain subscription.
// It allocates nothing: the plain subscriptions' deliveries ask it.
func mqttStoredQoS(hdr []byte) bool {
	i := strings.Index(bytesView(hdr), "\r\n"+mqttPubHeader+":")
	if i < 0 {
		return false
	}
	i += 2 + len(mqttPubHeader) + 1
	return i < len(hdr) && hdr[i] > '0' && hdr[i] <= '2'
}

// mqttGrant is the QoS a SUBSCRIBE asking for qos gets: 1 for 1 and 2
// with JetStream (bus delivers at most QoS 1), else 0.
func (c *conn) mqttGrant(qos byte) byte {
	if c.mqtt.session.Load() == nil || qos == 0 {
		return 0
	}
	return 1
}

// mqttBindConsumer gives the filter's sid a consumer on subject (made
// unless the session has one) and the subscription its deliveries come
// to. It reports whether the session record changed.
func (c *conn) mqttBindConsumer(st *mqttStored, sid, subject string) (changed bool, err error) {
	if err := st.js.ensureStreams(); err != nil {
		return false, err
	}
	st.mu.Lock()
	cc := st.cons[sid]
	if st.deliver[sid] != nil {
		st.mu.Unlock()
		return false, nil // bound already (a SUBSCRIBE again)
	}
	st.mu.Unlock()
	if cc == nil {
		o := c.srv.opts.MQTT
		token := mqttToken()
		cc = &mqttConsumerConfig{
			Durable: st.hash + "_" + token, DeliverSubject: mqttDeliverPrefix + token,
			DeliverPolicy: "new", AckPolicy: "explicit", FilterSubject: mqttMsgsPrefix + subject,
			AckWait: int64(o.ackWait()), MaxAckPending: o.maxAckPending(),
			MemoryStorage: o.ConsumerMemoryStorage, InactiveThreshold: int64(o.ConsumerInactiveThreshold),
		}
		changed = true
	}
	// Created again when it exists: the same config finds it, and one
	// lost (deleted by hand) comes back.
	if err := st.js.createConsumer(cc); err != nil {
		return false, err
	}
	sub := &subscription{subject: cc.DeliverSubject}
	var rights *subRights
	if p := c.subPerms; p != nil {
		rights = newSubRights(p, subject, "")
	}
	sub.handler = st.deliverTo(cc.Durable, subject, rights)
	if _, err := c.srv.subscribeIn(st.js.acc, sub); err != nil {
		return false, err
	}
	st.mu.Lock()
	if st.conn != c {
		st.mu.Unlock()
		c.srv.unsubscribeIn(st.js.acc, sub)
		return false, errConnClosed // closed or taken over meanwhile
	}
	if st.cons == nil {
		st.cons = map[string]*mqttConsumerConfig{}
	}
	if st.deliver == nil {
		st.deliver = map[string]*subscription{}
	}
	st.cons[sid], st.deliver[sid] = cc, sub
	st.mu.Unlock()
	// A push consumer waits for interest in its deliver subject; this
	// is it coming (back).
	c.srv.watchers.changed(sub.subject)
	return changed, nil
}

// mqttDropConsumer removes the sid's consumer, if any, and what is
// pending of it. It reports whether the session had one.
func (c *conn) mqttDropConsumer(st *mqttStored, sid string) bool {
	st.mu.Lock()
	cc, sub := st.cons[sid], st.deliver[sid]
	delete(st.cons, sid)
	delete(st.deliver, sid)
	if cc != nil {
		st.forgetConsumer(cc.Durable)
	}
	st.mu.Unlock()
	if sub != nil {
		c.srv.unsubscribeIn(st.js.acc, sub)
	}
	if cc == nil {
		return false
	}
	if err := st.js.deleteConsumer(cc.Durable); err != nil {
		c.log.Warn("mqtt consumer not removed", "consumer", cc.Durable, "err", err)
	}
	return true
}

// deliverTo is the handler of a consumer's deliver subject: a stored
// QoS 1 message goes to the bound connection as a QoS 1 PUBLISH on the
// topic its subject maps back to. pattern is the subscription's subject
// (for [MQTT-4.7.2-1]), rights its delivery-time permissions (nil for
// none): a message they refuse is acked and dropped (GHSA-7qmq-8cc4-hxwg:
// every delivery path checks the deny rules).
func (st *mqttStored) deliverTo(durable, pattern string, rights *subRights) msgHandler {
	return func(subject, reply []byte, hdr int, msg []byte) bool {
		if !bytes.HasPrefix(subject, []byte(mqttMsgsPrefix)) || hdr < 0 || !mqttStoredQoS(msg[:hdr]) {
			return false // not a message an MQTT client stored at QoS 1
		}
		subject = subject[len(mqttMsgsPrefix):]
		st.mu.Lock()
		c := st.conn
		if c == nil || st.deliver == nil {
			st.mu.Unlock()
			return false
		}
		if mqttHidden(pattern, subject) || rights != nil && !rights.mayReceive("", subject, true) {
			st.mu.Unlock()
			st.js.s.routeIn(st.js.acc.trie, nil, reply, reply, nil, -1, nil)
			return true
		}
		pi, dup := st.track(durable, string(reply))
		st.mu.Unlock()
		if pi == 0 {
			return false
		}
		res := c.out.appendPublishQoS1(subject, pi, dup, msg[hdr:])
		if res.overLimit {
			c.slowConsumer()
			return false
		}
		c.out.signal()
		return res.queued
	}
}

// mqttPuback acknowledges the stream message behind a QoS 1 delivery.
func (c *conn) mqttPuback(pi uint16) {
	st := c.mqtt.session.Load()
	if st == nil {
		return
	}
	if ack := st.acked(pi); ack != "" {
		c.srv.routeIn(st.js.acc.trie, nil, stringBytes(ack), stringBytes(ack), nil, -1, nil)
	}
}

// mqttResend has JetStream send again, now, what the session's earlier
// connection did not acknowledge ([MQTT-4.4.0-1]: unacknowledged
// PUBLISH packets are resent on reconnect), rather than after ack_wait.
func (st *mqttStored) mqttResend() {
	st.mu.Lock()
	acks := make([]string, 0, len(st.pending))
	for _, p := range st.pending {
		acks = append(acks, p.ack)
	}
	st.mu.Unlock()
	for _, ack := range acks {
		st.js.s.routeIn(st.js.acc.trie, nil, stringBytes(ack), stringBytes(ack), nil, -1, []byte("-NAK"))
	}
}

// appendPublishQoS1 queues a stored message as a QoS 1 PUBLISH with
// packet id pi. Unlike appendPublish it allocates when the topic grows
// o.line; QoS 1 deliveries are bounded by the stream, not the wire.
func (o *outbound) appendPublishQoS1(subject []byte, pi uint16, dup bool, payload []byte) appendResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, refused, ok := o.reserve(len(subject) + len(payload) + 10)
	if !ok {
		return refused
	}
	first := byte(mqtt.PUBLISH)<<4 | 1<<1
	if dup {
		first |= 0x08
	}
	head, ok := o.publishHead(first, subject, pi, len(payload))
	if !ok {
		return appendResult{}
	}
	o.write(head)
	o.write(payload)
	o.msgs++
	o.bytes += int64(len(payload))
	return appendResult{queued: true}
}
