package mqtt

import "encoding/binary"

// CONNACK return codes of MQTT 3.1.1 (section 3.2.2.3).
const (
	ConnAccepted           byte = 0x00
	ConnBadProtocolLevel   byte = 0x01
	ConnIdentifierRejected byte = 0x02
	ConnServerUnavailable  byte = 0x03
	ConnBadUserOrPassword  byte = 0x04
	ConnNotAuthorized      byte = 0x05
	// ConnQoS2WillRejected is not MQTT 3.1.1's: the reference answers a
	// QoS 2 will with it when it rejects QoS 2 publishes.
	ConnQoS2WillRejected byte = 0x10
)

// SubackFailure is the SUBACK return code of a refused filter.
const SubackFailure byte = 0x80

// appendHeader writes a fixed header with the remaining length n.
func appendHeader(dst []byte, first byte, n int) []byte { return appendVarInt(append(dst, first), n) }

// AppendFixedHeader appends a fixed header: the first byte (type and
// flags) and the remaining length n, at most MaxRemainingLength.
func AppendFixedHeader(dst []byte, first byte, n int) []byte { return appendHeader(dst, first, n) }

func appendString(dst, s []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// AppendConnack appends a CONNACK.
func AppendConnack(dst []byte, sessionPresent bool, code byte) []byte {
	var sp byte
	if sessionPresent {
		sp = 1
	}
	return append(dst, byte(CONNACK)<<4, 2, sp, code)
}

// AppendPublish appends p as a PUBLISH. The topic must be at most 65535
// bytes, as every topic the decoder accepts is.
func AppendPublish(dst []byte, p *Publish) []byte {
	return appendPublish(dst, p, nil)
}

// appendPublish writes a PUBLISH, with props as MQTT 5's property block
// after the packet id (nil at level 4).
func appendPublish(dst []byte, p *Publish, props *Properties) []byte {
	flags := p.QoS << 1
	if p.Dup {
		flags |= 0x08
	}
	if p.Retain {
		flags |= 0x01
	}
	n := 2 + len(p.Topic) + len(p.Payload)
	if props != nil {
		n += PropertiesSize(props)
	}
	if p.QoS > 0 {
		n += 2
	}
	dst = appendHeader(dst, byte(PUBLISH)<<4|flags, n)
	dst = appendString(dst, p.Topic)
	if p.QoS > 0 {
		dst = binary.BigEndian.AppendUint16(dst, p.PacketID)
	}
	if props != nil {
		dst = AppendProperties(dst, props)
	}
	return append(dst, p.Payload...)
}

// AppendAck appends PUBACK, PUBREC, PUBREL, PUBCOMP or UNSUBACK for id.
func AppendAck(dst []byte, t PacketType, id uint16) []byte {
	first := byte(t) << 4
	if t == PUBREL {
		first |= 0x02
	}
	return binary.BigEndian.AppendUint16(append(dst, first, 2), id)
}

// AppendSuback appends a SUBACK with one return code per filter.
func AppendSuback(dst []byte, id uint16, codes []byte) []byte {
	dst = appendHeader(dst, byte(SUBACK)<<4, 2+len(codes))
	dst = binary.BigEndian.AppendUint16(dst, id)
	return append(dst, codes...)
}

// AppendPingresp appends a PINGRESP.
func AppendPingresp(dst []byte) []byte { return append(dst, byte(PINGRESP)<<4, 0) }

// AppendConnect appends c as a CONNECT at c.Level (4 when 0; at 5 with
// c.Props and c.WillProps); tests and tools use it, the server never
// sends one.
func AppendConnect(dst []byte, c *Connect) []byte {
	var flags byte
	var body []byte
	body = appendString(body, []byte("MQTT"))
	level := c.Level
	if level == 0 {
		level = ProtocolLevel311
	}
	if c.CleanSession {
		flags |= 0x02
	}
	if c.HasWill {
		flags |= 0x04 | c.WillQoS<<3
		if c.WillRetain {
			flags |= 0x20
		}
	}
	if c.HasPassword {
		flags |= 0x40
	}
	if c.HasUsername {
		flags |= 0x80
	}
	body = append(body, level, flags)
	body = binary.BigEndian.AppendUint16(body, c.KeepAlive)
	if level == ProtocolLevel5 {
		body = AppendProperties(body, &c.Props)
	}
	body = appendString(body, c.ClientID)
	if c.HasWill {
		if level == ProtocolLevel5 {
			body = AppendProperties(body, &c.WillProps)
		}
		body = appendString(body, c.WillTopic)
		body = appendString(body, c.WillMessage)
	}
	if c.HasUsername {
		body = appendString(body, c.Username)
	}
	if c.HasPassword {
		body = appendString(body, c.Password)
	}
	return append(appendHeader(dst, byte(CONNECT)<<4, len(body)), body...)
}

// AppendSubscribe appends a SUBSCRIBE (or, with qos nil, an UNSUBSCRIBE)
// for filters; for tests and tools.
func AppendSubscribe(dst []byte, id uint16, filters [][]byte, qos []byte) []byte {
	body := binary.BigEndian.AppendUint16(nil, id)
	for i, f := range filters {
		body = appendString(body, f)
		if qos != nil {
			body = append(body, qos[i])
		}
	}
	t := SUBSCRIBE
	if qos == nil {
		t = UNSUBSCRIBE
	}
	return append(appendHeader(dst, byte(t)<<4|0x02, len(body)), body...)
}
