package server

import (
	"fmt"

	"github.com/bus-dev/bus/server/mqtt"
)

// The two ways a retained message is set: a PUBLISH with the retain
// flag, and a will with it when the will goes out. Both are stored under
// the topic's own subject (before the account's mappings, which the
// message is routed through), and only when the user may publish there:
// a refused publish stores nothing, as it routes nothing.

// mqttRetain stores a retained PUBLISH's message as its topic's
// retained message, or clears the topic's with an empty payload
// ([MQTT-3.3.1-5], [MQTT-3.3.1-10]), before it is routed as any
// PUBLISH. A store that fails is logged and the message still routed, as
// in the reference. Without JetStream in the account there is nowhere to
// keep it: the connection is closed (MQTT 3.1.1 has no other answer),
// while an empty one, which clears nothing, is routed.
func (c *conn) mqttRetain(subject []byte, p *mqtt.Publish) error {
	if !c.srv.jetStreamIn(c.acc) {
		if len(p.Payload) == 0 {
			return nil
		}
		return fmt.Errorf("%w: retained messages need JetStream in the account (docs/mqtt.md)", errMQTTProtocol)
	}
	if !c.mqttMayPublish(subject) {
		return nil // mqttRoute drops it and logs the violation
	}
	rec := mqttRetainedRecord{topic: string(p.Topic), flags: p.QoS<<1 | 1, payload: p.Payload}
	if err := c.storeRetained(c.acc, string(subject), &rec); err != nil {
		c.log.Error("mqtt retained message not stored", "topic", string(p.Topic), "err", err)
	}
	return nil
}

// mqttMayPublish says mqttRoute would route a message on subject.
func (c *conn) mqttMayPublish(subject []byte) bool {
	if m := c.acc.mapper; m != nil {
		subject = m.apply(subject)
	}
	return len(subject) > 0 && !reservedPublish(subject) && (c.pubPerms == nil || c.pubAllowed(subject))
}

// storeRetained stores rec with this connection's user as its source.
func (c *conn) storeRetained(acc *account, subject string, rec *mqttRetainedRecord) error {
	rec.origin, rec.source = c.srv.ID(), c.userName()
	return c.srv.storeRetained(acc, subject, rec)
}

// mqttStoreRetainedWill stores a retained will as its topic's retained
// message as it goes out. The closing goroutine waits for the store
// (bounded by mqttRetainedTimeout).
func (c *conn) mqttStoreRetainedWill(acc *account, w *mqttWill) {
	if w.retained == nil {
		return
	}
	if err := c.storeRetained(acc, w.key, w.retained); err != nil {
		c.log.Error("mqtt retained will not stored", "topic", w.retained.topic, "err", err)
	}
}
