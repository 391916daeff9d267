package server

import (
	"fmt"

	"github.com/bus-dev/bus/server/mqtt"
)

// PUBLISH, SUBSCRIBE and UNSUBSCRIBE of an MQTT client, mapped onto the
// subject space: a PUBLISH is routed as a PUB with no reply and no
// headers, a filter is a subscription (two for "a/#", which also
// matches "a"), checked against the user's rights on the mapped
// subject.
//
// QoS: a QoS 1 or 2 PUBLISH is stored in JetStream and acknowledged
// once stored, and a SUBSCRIBE granted QoS 1, when the account has
// JetStream (mqttqos.go); without, they are acknowledged once routed.

// mqttParentSID is the suffix of the sid of the extra subscription "a/#"
// makes on "a" (the reference's).
const mqttParentSID = " fwc"

// mqttPublish handles a PUBLISH.
func (c *conn) mqttPublish(flags byte, body []byte) error {
	m := c.mqtt
	var p mqtt.Publish
	if err := mqtt.DecodePublish(flags, body, &p); err != nil {
		return err
	}
	if p.QoS == 2 && m.rejectQoS2 {
		return fmt.Errorf("%w: QoS 2 PUBLISH with reject_qos2_publish", errMQTTProtocol)
	}
	if len(p.Payload) > c.parser.maxPayload {
		return fmt.Errorf("%w: %s (%d bytes, limit %d)", errMQTTProtocol, errMaxPayload.text, len(p.Payload), c.parser.maxPayload)
	}
	subject, err := mqtt.TopicToSubject(m.subject[:0], p.Topic)
	if err != nil {
		return fmt.Errorf("%w: %w", errMQTTProtocol, err)
	}
	m.subject = subject[:0]
	c.heard, c.active = true, true
	// A resent QoS 2 PUBLISH was stored and retained once already.
	resent := p.QoS == 2 && c.mqttReceived(m.session.Load(), p.PacketID)
	if p.Retain && !resent {
		if err := c.mqttRetain(subject, &p); err != nil {
			return err
		}
	}
	if p.QoS > 0 {
		return c.mqttPublishStored(subject, &p)
	}
	c.mqttRoute(subject, p.Payload)
	return nil
}

// mqttRoute routes a PUBLISH's payload on subject as processPub routes
// a PUB: mappings first, then the reserved subjects and the publish
// rules. A refused publish is dropped and logged; MQTT 3.1.1 has no way
// to say so, and the reference drops it too (a QoS 1 one is still
// acknowledged).
func (c *conn) mqttRoute(subject, payload []byte) { c.mqttRouteWith(subject, -1, payload) }

// mqttRouteWith is mqttRoute for a message with a header block of hdr
// bytes (-1 for none). It returns the subject after the mappings and
// whether the message was routed (a mapping or the rules may drop it).
func (c *conn) mqttRouteWith(subject []byte, hdr int, msg []byte) (mapped []byte, routed bool) {
	c.inMsgs.Add(1)
	c.inBytes.Add(int64(len(msg) - max(hdr, 0)))
	if m := c.acc.mapper; m != nil {
		subject = m.apply(subject)
	}
	if len(subject) == 0 {
		return nil, false // a mapping dropped it
	}
	if reservedPublish(subject) || c.pubPerms != nil && !c.pubAllowed(subject) {
		c.pubViolation(subject)
		return nil, false
	}
	c.publish(subject, nil, hdr, msg)
	return subject, true
}

// mqttSubscribe handles a SUBSCRIBE: one return code per filter, in
// order, then SUBACK.
func (c *conn) mqttSubscribe(body []byte) error {
	m := c.mqtt
	f, err := mqtt.DecodeFilters(mqtt.SUBSCRIBE, body)
	if err != nil {
		return err
	}
	codes := m.codes[:0]
	for filter, qos, ok := f.Next(); ok; filter, qos, ok = f.Next() {
		codes = append(codes, c.mqttAddFilter(filter, qos))
	}
	if err := f.Err(); err != nil {
		return err
	}
	m.codes = codes[:0]
	c.mqttSend(mqtt.AppendSuback(m.packet[:0], f.PacketID, codes))
	c.mqttSendRetained(body, codes)
	return nil
}

// mqttAddFilter subscribes to one filter at qos and returns its SUBACK
// code: the QoS granted (mqttGrant), or 0x80 for a filter that does not
// map, one the user may not subscribe to, one past the subscription
// limit, or a QoS 1 one whose consumer JetStream did not make.
func (c *conn) mqttAddFilter(filter []byte, qos byte) byte {
	subject, parent, err := mqtt.FilterToSubject(nil, filter)
	if err != nil {
		c.log.Warn("mqtt subscription refused", "filter", string(filter), "err", err)
		return mqtt.SubackFailure
	}
	sid := string(filter)
	if p := c.subPerms; p != nil {
		if !p.canSubscribe(bytesView(subject), "") || parent > 0 && !p.canSubscribe(bytesView(subject[:parent]), "") {
			c.log.Warn("subscription violation", "user", c.userName(), "subject", string(subject), "filter", sid)
			return mqtt.SubackFailure
		}
	}
	granted := c.mqttGrant(qos)
	if !c.mqttAddSub(string(subject), sid, granted) {
		return mqtt.SubackFailure
	}
	if parent > 0 && !c.mqttAddSub(string(subject[:parent]), sid+mqttParentSID, granted) {
		c.mqttRemoveSub(sid)
		return mqtt.SubackFailure
	}
	if st := c.mqtt.session.Load(); st != nil {
		if err := c.mqttSessionSubscribe(st, sid, string(subject), parent, granted); err != nil {
			c.log.Warn("mqtt subscription refused", "filter", sid, "err", err)
			c.mqttRemoveSub(sid)
			c.mqttRemoveSub(sid + mqttParentSID)
			return mqtt.SubackFailure
		}
	}
	return granted
}

// mqttAddSub adds a subscription on subject with sid at QoS qos, as
// processSub does a SUB's; a filter subscribed again keeps its
// subscription with the new QoS ([MQTT-3.8.4-3]).
func (c *conn) mqttAddSub(subject, sid string, qos byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		return false
	}
	if sub, dup := c.subs[sid]; dup {
		sub.mqttQoS.Store(uint32(qos))
		return true
	}
	if limit := lowerLimit(lowerLimit(c.srv.liveOpts().MaxSubscriptions, c.acc.limits.Load().MaxSubscriptions), c.userMaxSubs()); limit > 0 && len(c.subs) >= limit {
		c.log.Warn("mqtt subscription refused", "filter", sid, "reason", errMaxSubscriptions.text)
		return false
	}
	sub := &subscription{conn: c, subject: subject, noHeaders: true, sid: []byte(sid)}
	sub.mqttQoS.Store(uint32(qos))
	if p := c.subPerms; p != nil {
		sub.rights.Store(newSubRights(p, sub.subject, ""))
	}
	if err := c.trie.Insert(sub.subject, "", sub); err != nil {
		return false
	}
	c.subs[sid] = sub
	c.srv.interestChanged(c.trie, sub, 1)
	c.srv.watchers.changed(sub.subject)
	return true
}

// mqttRemoveSub removes the subscription with sid, if any.
func (c *conn) mqttRemoveSub(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.subs[sid]
	if sub == nil {
		return
	}
	delete(c.subs, sid)
	if c.trie.Remove(sub.subject, sub.queue, sub) == nil {
		c.srv.interestChanged(c.trie, sub, -1)
	}
	c.srv.watchers.changed(sub.subject)
}

// mqttUnsubscribe handles an UNSUBSCRIBE: each filter's subscriptions go
// (a filter never subscribed is no error), then UNSUBACK.
func (c *conn) mqttUnsubscribe(body []byte) error {
	f, err := mqtt.DecodeFilters(mqtt.UNSUBSCRIBE, body)
	if err != nil {
		return err
	}
	for filter, _, ok := f.Next(); ok; filter, _, ok = f.Next() {
		c.mqttRemoveSub(string(filter))
		c.mqttRemoveSub(string(filter) + mqttParentSID)
		if st := c.mqtt.session.Load(); st != nil {
			c.mqttSessionUnsubscribe(st, string(filter))
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	c.mqttSend(mqtt.AppendAck(c.mqtt.packet[:0], mqtt.UNSUBACK, f.PacketID))
	return nil
}
