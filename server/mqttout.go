package server

import "github.com/bus-dev/bus/server/mqtt"

// What an MQTT client's outbound queue holds: its own control packets
// (CONNACK, SUBACK, PUBACK …) and the messages delivered to it, framed
// as PUBLISH on the topic their subject maps back to. The writer and the
// inline path write the queue as they write any other.

// appendPacket queues one of the connection's own control packets. Like
// appendControl it never trips the slow-consumer limit.
func (o *outbound) appendPacket(pkt []byte) {
	o.mu.Lock()
	if !o.closed {
		o.write(pkt)
	}
	o.mu.Unlock()
}

// appendLastPacket queues a final packet (a refusing CONNACK) and closes
// the queue, as appendLast does for a last -ERR.
func (o *outbound) appendLastPacket(pkt []byte) {
	o.mu.Lock()
	if !o.closed {
		o.write(pkt)
		o.closed = true
		if o.stall != nil {
			close(o.stall)
			o.stall = nil
		}
	}
	o.mu.Unlock()
	o.signal()
}

// mqttHidden says a message on subject is not for an MQTT subscription
// on pattern: [MQTT-4.7.2-1], a filter starting with a wildcard does not
// match a topic starting with '$' (the server's own, such as $SYS).
func mqttHidden(pattern string, subject []byte) bool {
	return len(subject) > 0 && subject[0] == '$' && pattern != "" && (pattern[0] == '*' || pattern[0] == '>')
}

// publishHead writes into o.line a PUBLISH's fixed header (first byte
// first), topic and, at QoS 1 or 2, packet id pi, for a payload of n
// bytes, and returns it; false for a topic longer than MQTT allows. The
// topic goes first, after room for the fixed header and its length, so
// the header can be written in front of it once the topic's length is
// known. With o.mu held.
func (o *outbound) publishHead(first byte, subject []byte, pi uint16, n int) ([]byte, bool) {
	const room = 7 // type byte, up to 4 length bytes, topic length
	b := append(o.line[:0], make([]byte, room)...)
	b = mqtt.SubjectToTopic(b, bytesView(subject))
	topic := len(b) - room
	if topic > 0xffff {
		return nil, false
	}
	rest := 2 + topic + n
	if first&0x06 != 0 {
		b = append(b, byte(pi>>8), byte(pi))
		rest += 2
	}
	var hdrBuf [5]byte
	h := mqtt.AppendFixedHeader(hdrBuf[:0], first, rest)
	start := room - 2 - len(h)
	copy(b[start:], h)
	b[room-2], b[room-1] = byte(topic>>8), byte(topic)
	o.line = b
	return b[start:], true
}

// appendPublish queues a message for an MQTT subscriber as a QoS 0
// PUBLISH. MQTT 3.1.1 has no headers: a header block is left out, as
// the reference does. It allocates nothing once o.line has grown to the
// longest topic (see BenchmarkMQTTPubSub).
func (o *outbound) appendPublish(subject []byte, hdr int, msg []byte) appendResult {
	if hdr >= 0 {
		msg = msg[hdr:]
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	pending, refused, ok := o.reserve(len(subject) + len(msg) + 8)
	if !ok {
		return refused
	}
	head, ok := o.publishHead(byte(mqtt.PUBLISH)<<4, subject, 0, len(msg))
	if !ok {
		return appendResult{} // no MQTT topic is that long; nothing to deliver
	}
	o.write(head)
	o.write(msg)
	o.msgs++
	o.bytes += int64(len(msg))
	if pending > o.stallThreshold() {
		if o.stall == nil {
			o.stall = make(chan struct{})
		}
		return appendResult{queued: true, stall: o.stall}
	}
	return appendResult{queued: true}
}
