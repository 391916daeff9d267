package server

import (
	"strings"
	"time"

	"github.com/bus-dev/bus/server/mqtt"
)

// Retained messages to a new subscription: right after SUBACK, every
// retained message whose topic a granted filter matches ("a/#" also
// matches "a") goes out as a PUBLISH with the retain flag set
// ([MQTT-3.3.1-6], [MQTT-3.3.1-8]); live deliveries have it clear. A
// message is left out when the user may not read it as a stored message
// (permissions.canReceiveStored: the subscribe allow and deny rules on
// its own subject, GHSA-7qmq-8cc4-hxwg), and a filter starting with a
// wildcard does not match a topic starting with '$' ([MQTT-4.7.2-1]).
//
// The reader goroutine sends them before it reads the next packet, a
// batch of records read from the stream at a time, so a SUBSCRIBE matching many
// retained topics holds that client's reader (and only it) meanwhile. Its
// queue is bounded as any: past 3/4 of max_pending the reader waits for
// the writer, and a client that does not read within mqttRetainedStall
// is closed as a slow consumer.

// mqttRetainedStall is how long sending retained messages waits for a
// client whose queue is full to read.
const mqttRetainedStall = 2 * time.Second

// mqttRetainedGetMax is how many matching records a filter reads with a
// message get each; past it, through a consumer (mqttretainfetch.go).
const mqttRetainedGetMax = 16

// mqttSendRetained sends the retained messages for a SUBSCRIBE's
// filters, given its SUBACK codes (one per filter, in order).
func (c *conn) mqttSendRetained(body, codes []byte) {
	if !c.srv.jetStreamIn(c.acc) {
		return
	}
	f, err := mqtt.DecodeFilters(mqtt.SUBSCRIBE, body)
	if err != nil {
		return // already refused by mqttSubscribe
	}
	var r *mqttRetained
	var scratch []byte
	for i := 0; ; i++ {
		filter, _, ok := f.Next()
		if !ok {
			break
		}
		if i >= len(codes) || codes[i] == mqtt.SubackFailure {
			continue
		}
		subject, parent, err := mqtt.FilterToSubject(nil, filter)
		if err != nil {
			continue
		}
		if r == nil {
			if r, err = c.srv.retainedOf(c.acc); err != nil {
				c.log.Error("mqtt retained messages not sent", "filter", string(filter), "err", err)
				return
			}
		}
		patterns := []string{string(subject)}
		if parent > 0 {
			patterns = append(patterns, string(subject[:parent]))
		}
		refs, many := r.matching(mqttRetainedGetMax, patterns...)
		sending := true
		if !many {
			// Few (the common case, often none): a message get each, no
			// consumer to create.
			for _, ref := range refs {
				rec, found, err := c.srv.retainedGet(c.acc, ref.seq)
				if err != nil {
					c.log.Error("mqtt retained message not read", "filter", string(filter), "seq", ref.seq, "err", err)
					return
				}
				if !found {
					r.forget(ref)
				} else {
					if scratch, sending = c.mqttSendRetainedRecord(patterns[0], rec, scratch); !sending {
						return
					}
				}
			}
			continue
		}
		filters := make([]string, len(patterns))
		for i, p := range patterns {
			filters[i] = mqttRetainedPrefix + p
		}
		err = c.srv.fetchRetained(c.acc, filters, func(rec fetchedRecord) bool {
			scratch, sending = c.mqttSendRetainedRecord(patterns[0], rec, scratch)
			return sending
		})
		if err != nil {
			c.log.Error("mqtt retained messages not read", "filter", string(filter), "err", err)
		}
		if !sending || err != nil {
			return
		}
	}
	c.wakeWriters()
}

// mqttSendRetainedRecord queues a record for the subscription on
// pattern, unless it is a clearing one or the subscriber may not have
// it. It reports false when sending must stop (the connection is
// closing).
func (c *conn) mqttSendRetainedRecord(pattern string, m fetchedRecord, scratch []byte) ([]byte, bool) {
	subject, ok := strings.CutPrefix(m.subject, mqttRetainedPrefix)
	if !ok || subject == "" || len(m.data) == 0 {
		return scratch, true
	}
	rec, err := decodeRetained(m.header, m.data)
	if err != nil {
		c.log.Warn("mqtt retained record skipped", "subject", m.subject, "seq", m.seq, "err", err)
		return scratch, true
	}
	if mqttHidden(pattern, stringBytes(subject)) {
		return scratch, true
	}
	if p := c.subPerms; p != nil && !p.canReceiveStored(stringBytes(subject)) {
		c.log.Debug("mqtt retained message withheld: the user may not subscribe to its subject", "user", c.userName(), "subject", subject)
		return scratch, true
	}
	topic := mqtt.SubjectToTopic(scratch[:0], subject)
	if len(topic) > 0xffff {
		return topic[:0], true
	}
	pkt := mqtt.AppendPublish(c.mqtt.packet[:0], &mqtt.Publish{Retain: true, Topic: topic, Payload: rec.payload})
	c.mqtt.packet = pkt[:0]
	res := c.out.appendRetained(pkt, len(rec.payload))
	switch {
	case res.overLimit:
		c.slowConsumer()
		return topic[:0], false
	case !res.queued:
		return topic[:0], false
	}
	c.deferWake(c)
	if res.stall != nil {
		c.wakeWriters()
		t := time.NewTimer(mqttRetainedStall)
		defer t.Stop()
		select {
		case <-res.stall:
		case <-t.C:
			c.slowConsumer()
			return topic[:0], false
		}
	}
	return topic[:0], true
}

// appendRetained queues a retained PUBLISH packet (payload bytes of its
// message) within the pending limit, as appendPublish queues a live one.
func (o *outbound) appendRetained(pkt []byte, payload int) appendResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	pending, refused, ok := o.reserve(len(pkt))
	if !ok {
		return refused
	}
	o.write(pkt)
	o.msgs++
	o.bytes += int64(payload)
	if pending > o.stallThreshold() {
		if o.stall == nil {
			o.stall = make(chan struct{})
		}
		return appendResult{queued: true, stall: o.stall}
	}
	return appendResult{queued: true}
}
