package mqtt

import "encoding/binary"

// propOrder is the order AppendProperties writes present properties in
// (any order is valid; a fixed one makes packets comparable in tests).
var propOrder = [...]byte{PropPayloadFormat, PropMessageExpiry, PropContentType, PropResponseTopic,
	PropCorrelationData, PropSessionExpiry, PropAssignedClientID, PropServerKeepAlive, PropAuthMethod,
	PropAuthData, PropRequestProblemInfo, PropWillDelay, PropRequestResponseInfo, PropResponseInfo,
	PropServerReference, PropReasonString, PropReceiveMaximum, PropTopicAliasMaximum, PropTopicAlias,
	PropMaximumQoS, PropRetainAvailable, PropMaximumPacketSize, PropWildcardSubAvailable,
	PropSubIDAvailable, PropSharedSubAvailable}

// PropertiesSize is the length of p's block as AppendProperties writes
// it, its length prefix included.
func PropertiesSize(p *Properties) int {
	n := p.bodySize()
	return varIntSize(n) + n
}

func (p *Properties) bodySize() int {
	n := 0
	for _, id := range propOrder {
		if !p.Has(id) {
			continue
		}
		switch propKinds[id] {
		case kindByte:
			n += 2
		case kindU16:
			n += 3
		case kindU32:
			n += 5
		default:
			n += 3 + len(*p.bytesField(id))
		}
	}
	for _, id := range p.SubscriptionIDs {
		n += 1 + varIntSize(int(id))
	}
	p.EachUser(func(k, v []byte) bool {
		n += 5 + len(k) + len(v)
		return true
	})
	return n
}

// AppendProperties appends p as a property block: its length, then each
// present property, each subscription id and each user property. Values
// are the caller's to keep in range (strings at most 65535 bytes).
func AppendProperties(dst []byte, p *Properties) []byte {
	dst = appendVarInt(dst, p.bodySize())
	for _, id := range propOrder {
		if !p.Has(id) {
			continue
		}
		dst = append(dst, id)
		switch propKinds[id] {
		case kindByte:
			dst = append(dst, *p.byteField(id))
		case kindU16:
			dst = binary.BigEndian.AppendUint16(dst, *p.u16Field(id))
		case kindU32:
			dst = binary.BigEndian.AppendUint32(dst, *p.u32Field(id))
		default:
			dst = appendString(dst, *p.bytesField(id))
		}
	}
	for _, id := range p.SubscriptionIDs {
		dst = appendVarInt(append(dst, PropSubscriptionID), int(id))
	}
	p.EachUser(func(k, v []byte) bool {
		dst = appendString(appendString(append(dst, PropUserProperty), k), v)
		return true
	})
	return dst
}

func varIntSize(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	}
	return 4
}

func appendVarInt(dst []byte, n int) []byte {
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n > 0 {
			b |= 0x80
		}
		dst = append(dst, b)
		if n == 0 {
			return dst
		}
	}
}
