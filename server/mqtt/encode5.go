package mqtt

import "encoding/binary"

// AppendConnack5 appends an MQTT 5 CONNACK: session present, a reason
// code and properties (nil for none).
func AppendConnack5(dst []byte, sessionPresent bool, reason byte, props *Properties) []byte {
	var sp byte
	if sessionPresent {
		sp = 1
	}
	dst = appendHeader(dst, byte(CONNACK)<<4, 2+propsSize(props))
	return appendProps(append(dst, sp, reason), props)
}

// AppendPublish5 appends p as an MQTT 5 PUBLISH, with p.Props.
func AppendPublish5(dst []byte, p *Publish) []byte { return appendPublish(dst, p, &p.Props) }

// AppendAck5 appends an MQTT 5 PUBACK, PUBREC, PUBREL or PUBCOMP. A
// success without properties takes the short form of 2 bytes.
func AppendAck5(dst []byte, t PacketType, id uint16, reason byte, props *Properties) []byte {
	if reason == ReasonSuccess && (props == nil || props.Empty()) {
		return AppendAck(dst, t, id)
	}
	first := byte(t) << 4
	if t == PUBREL {
		first |= 0x02
	}
	dst = appendHeader(dst, first, 3+propsSize(props))
	dst = append(binary.BigEndian.AppendUint16(dst, id), reason)
	return appendProps(dst, props)
}

// AppendSuback5 appends an MQTT 5 SUBACK (or, with t UNSUBACK, an
// UNSUBACK): the packet id, properties and one reason code per filter.
func AppendSuback5(dst []byte, t PacketType, id uint16, props *Properties, codes []byte) []byte {
	dst = appendHeader(dst, byte(t)<<4, 2+propsSize(props)+len(codes))
	dst = appendProps(binary.BigEndian.AppendUint16(dst, id), props)
	return append(dst, codes...)
}

// AppendReasoned appends an MQTT 5 DISCONNECT or AUTH; a success without
// properties is the empty body.
func AppendReasoned(dst []byte, t PacketType, reason byte, props *Properties) []byte {
	if reason == ReasonSuccess && (props == nil || props.Empty()) {
		return append(dst, byte(t)<<4, 0)
	}
	dst = appendHeader(dst, byte(t)<<4, 1+propsSize(props))
	return appendProps(append(dst, reason), props)
}

// AppendSubscribe5 appends an MQTT 5 SUBSCRIBE (opts non-nil, one per
// filter) or UNSUBSCRIBE (opts nil); for tests and tools.
func AppendSubscribe5(dst []byte, id uint16, props *Properties, filters [][]byte, opts []SubOptions) []byte {
	body := appendProps(binary.BigEndian.AppendUint16(nil, id), props)
	for i, f := range filters {
		body = appendString(body, f)
		if opts != nil {
			body = append(body, opts[i].Byte())
		}
	}
	t := SUBSCRIBE
	if opts == nil {
		t = UNSUBSCRIBE
	}
	return append(appendHeader(dst, byte(t)<<4|0x02, len(body)), body...)
}

// propsSize and appendProps take nil as no properties.
func propsSize(p *Properties) int {
	if p == nil {
		return 1
	}
	return PropertiesSize(p)
}

func appendProps(dst []byte, p *Properties) []byte {
	if p == nil {
		return append(dst, 0)
	}
	return AppendProperties(dst, p)
}
