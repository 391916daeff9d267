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
// QoS: a QoS 1 PUBLISH is acknowledged (PUBACK) once routed, a QoS 2 one
// with PUBREC once routed, routed once whatever the duplicates, and
// completed by PUBREL/PUBCOMP; neither is stored. Subscriptions are
// granted at QoS 0: deliveries are at most once (docs/mqtt.md).

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
	routed := true
	if p.QoS == 2 {
		if _, dup := m.qos2[p.PacketID]; dup {
			routed = false // a resent QoS 2 PUBLISH: already routed once
		} else {
			if m.qos2 == nil {
				m.qos2 = make(map[uint16]struct{})
			}
			m.qos2[p.PacketID] = struct{}{}
		}
	}
	if routed && p.Retain {
		if err := c.mqttRetain(subject, &p); err != nil {
			return err
		}
	}
	if routed {
		c.mqttRoute(subject, p.Payload)
	}
	switch p.QoS {
	case 1:
		c.mqttSend(mqtt.AppendAck(m.packet[:0], mqtt.PUBACK, p.PacketID))
	case 2:
		c.mqttSend(mqtt.AppendAck(m.packet[:0], mqtt.PUBREC, p.PacketID))
	}
	return nil
}

// mqttRoute routes a PUBLISH's payload on subject as processPub routes
// a PUB: mappings first, then the reserved subjects and the publish
// rules. A refused publish is dropped and logged; MQTT 3.1.1 has no way
// to say so, and the reference drops it too (a QoS 1 one is still
// acknowledged).
func (c *conn) mqttRoute(subject, payload []byte) {
	c.inMsgs.Add(1)
	c.inBytes.Add(int64(len(payload)))
	if m := c.acc.mapper; m != nil {
		subject = m.apply(subject)
	}
	if len(subject) == 0 {
		return // a mapping dropped it
	}
	if reservedPublish(subject) || c.pubPerms != nil && !c.pubAllowed(subject) {
		c.pubViolation(subject)
		return
	}
	c.publish(subject, nil, -1, payload)
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
	for filter, _, ok := f.Next(); ok; filter, _, ok = f.Next() {
		codes = append(codes, c.mqttAddFilter(filter))
	}
	if err := f.Err(); err != nil {
		return err
	}
	m.codes = codes[:0]
	c.mqttSend(mqtt.AppendSuback(m.packet[:0], f.PacketID, codes))
	c.mqttSendRetained(body, codes)
	return nil
}

// mqttAddFilter subscribes to one filter and returns its SUBACK code:
// QoS 0 granted, or 0x80 for a filter that does not map, one the user
// may not subscribe to, or one past the subscription limit.
func (c *conn) mqttAddFilter(filter []byte) byte {
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
	if !c.mqttAddSub(string(subject), sid) {
		return mqtt.SubackFailure
	}
	if parent > 0 && !c.mqttAddSub(string(subject[:parent]), sid+mqttParentSID) {
		c.mqttRemoveSub(sid)
		return mqtt.SubackFailure
	}
	return 0 // granted at QoS 0, whatever was asked
}

// mqttAddSub adds a subscription on subject with sid, as processSub
// does a SUB's; a filter subscribed again keeps its subscription
// ([MQTT-3.8.4-3] replaces it, and QoS 0 is all it could change to).
func (c *conn) mqttAddSub(subject, sid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		return false
	}
	if _, dup := c.subs[sid]; dup {
		return true
	}
	if limit := lowerLimit(lowerLimit(c.srv.liveOpts().MaxSubscriptions, c.acc.limits.Load().MaxSubscriptions), c.userMaxSubs()); limit > 0 && len(c.subs) >= limit {
		c.log.Warn("mqtt subscription refused", "filter", sid, "reason", errMaxSubscriptions.text)
		return false
	}
	sub := &subscription{conn: c, subject: subject, noHeaders: true, sid: []byte(sid)}
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
	}
	if err := f.Err(); err != nil {
		return err
	}
	c.mqttSend(mqtt.AppendAck(c.mqtt.packet[:0], mqtt.UNSUBACK, f.PacketID))
	return nil
}
