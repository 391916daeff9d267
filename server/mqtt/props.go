package mqtt

import (
	"encoding/binary"
	"fmt"
)

// ProtocolLevel5 is MQTT 5's protocol level.
const ProtocolLevel5 = 5

// The MQTT 5 property identifiers (section 2.2.2.2).
const (
	PropPayloadFormat        byte   = 0x01
	PropMessageExpiry        byte   = 0x02
	PropContentType          byte   = 0x03
	PropResponseTopic        byte   = 0x08
	PropCorrelationData      byte   = 0x09
	PropSubscriptionID       byte   = 0x0B
	PropSessionExpiry        byte   = 0x11
	PropAssignedClientID     byte   = 0x12
	PropServerKeepAlive      byte   = 0x13
	PropAuthMethod           byte   = 0x15
	PropAuthData             byte   = 0x16
	PropRequestProblemInfo   byte   = 0x17
	PropWillDelay            byte   = 0x18
	PropRequestResponseInfo  byte   = 0x19
	PropResponseInfo         byte   = 0x1A
	PropServerReference      byte   = 0x1C
	PropReasonString         byte   = 0x1F
	PropReceiveMaximum       byte   = 0x21
	PropTopicAliasMaximum    byte   = 0x22
	PropTopicAlias           byte   = 0x23
	PropMaximumQoS           byte   = 0x24
	PropRetainAvailable      byte   = 0x25
	PropUserProperty         byte   = 0x26
	PropMaximumPacketSize    byte   = 0x27
	PropWildcardSubAvailable byte   = 0x28
	PropSubIDAvailable       byte   = 0x29
	PropSharedSubAvailable   byte   = 0x2A
	maxPropID                       = PropSharedSubAvailable
	maxVarInt                       = MaxRemainingLength
	maxSubscriptionID        uint32 = maxVarInt
)

// propKind is how a property's value is written.
type propKind byte

const (
	kindNone propKind = iota // not a property
	kindByte
	kindU16
	kindU32
	kindVarInt
	kindString
	kindBinary
	kindPair
)

var propKinds = [maxPropID + 1]propKind{
	PropPayloadFormat: kindByte, PropMessageExpiry: kindU32, PropContentType: kindString,
	PropResponseTopic: kindString, PropCorrelationData: kindBinary, PropSubscriptionID: kindVarInt,
	PropSessionExpiry: kindU32, PropAssignedClientID: kindString, PropServerKeepAlive: kindU16,
	PropAuthMethod: kindString, PropAuthData: kindBinary, PropRequestProblemInfo: kindByte,
	PropWillDelay: kindU32, PropRequestResponseInfo: kindByte, PropResponseInfo: kindString,
	PropServerReference: kindString, PropReasonString: kindString, PropReceiveMaximum: kindU16,
	PropTopicAliasMaximum: kindU16, PropTopicAlias: kindU16, PropMaximumQoS: kindByte,
	PropRetainAvailable: kindByte, PropUserProperty: kindPair, PropMaximumPacketSize: kindU32,
	PropWildcardSubAvailable: kindByte, PropSubIDAvailable: kindByte, PropSharedSubAvailable: kindByte,
}

// PropContext is the packet (or CONNECT's will) a property block belongs
// to: each allows its own properties (section 2.2.2.2's table).
type PropContext byte

// The property contexts. PublishIn is a PUBLISH a client sends, which
// must not carry a subscription identifier [MQTT-3.3.4-6]; PublishOut is
// one a server sends, which may carry several.
const (
	CtxConnect PropContext = iota
	CtxWill
	CtxConnack
	CtxPublishIn
	CtxPublishOut
	CtxPubResponse // PUBACK, PUBREC, PUBREL, PUBCOMP
	CtxSubscribe
	CtxSuback
	CtxUnsubscribe
	CtxUnsuback
	CtxDisconnect
	CtxAuth
)

func bits(ids ...byte) uint64 {
	var m uint64
	for _, id := range ids {
		m |= 1 << id
	}
	return m
}

var (
	messageProps = bits(PropPayloadFormat, PropMessageExpiry, PropContentType, PropResponseTopic,
		PropCorrelationData, PropUserProperty)
	allowedProps = [...]uint64{
		CtxConnect: bits(PropSessionExpiry, PropAuthMethod, PropAuthData, PropRequestProblemInfo,
			PropRequestResponseInfo, PropReceiveMaximum, PropTopicAliasMaximum, PropUserProperty,
			PropMaximumPacketSize),
		CtxWill: messageProps | bits(PropWillDelay),
		CtxConnack: bits(PropSessionExpiry, PropAssignedClientID, PropServerKeepAlive, PropAuthMethod,
			PropAuthData, PropResponseInfo, PropServerReference, PropReasonString, PropReceiveMaximum,
			PropTopicAliasMaximum, PropMaximumQoS, PropRetainAvailable, PropUserProperty,
			PropMaximumPacketSize, PropWildcardSubAvailable, PropSubIDAvailable, PropSharedSubAvailable),
		CtxPublishIn:   messageProps | bits(PropTopicAlias),
		CtxPublishOut:  messageProps | bits(PropTopicAlias, PropSubscriptionID),
		CtxPubResponse: bits(PropReasonString, PropUserProperty),
		CtxSubscribe:   bits(PropSubscriptionID, PropUserProperty),
		CtxSuback:      bits(PropReasonString, PropUserProperty),
		CtxUnsubscribe: bits(PropUserProperty),
		CtxUnsuback:    bits(PropReasonString, PropUserProperty),
		CtxDisconnect:  bits(PropSessionExpiry, PropServerReference, PropReasonString, PropUserProperty),
		CtxAuth:        bits(PropAuthMethod, PropAuthData, PropReasonString, PropUserProperty),
	}
	// repeatable may appear more than once in a block (the rest must not,
	// section 2.2.2.2): user properties, and a server's PUBLISH names
	// every subscription it matched.
	repeatable = bits(PropUserProperty, PropSubscriptionID)
)

// Properties is a decoded (or to be encoded) MQTT 5 property block. Its
// slices alias the packet it was decoded from. A property is present when
// Has says so; its field is then its value.
type Properties struct {
	present uint64 // bit id set for each property seen

	PayloadFormat       byte
	MessageExpiry       uint32
	ContentType         []byte
	ResponseTopic       []byte
	CorrelationData     []byte
	SubscriptionIDs     []uint32 // one in a SUBSCRIBE; any number in a server's PUBLISH
	SessionExpiry       uint32
	AssignedClientID    []byte
	ServerKeepAlive     uint16
	AuthMethod          []byte
	AuthData            []byte
	RequestProblemInfo  byte
	WillDelay           uint32
	RequestResponseInfo byte
	ResponseInfo        []byte
	ServerReference     []byte
	ReasonString        []byte
	ReceiveMaximum      uint16
	TopicAliasMaximum   uint16
	TopicAlias          uint16
	MaximumQoS          byte
	RetainAvailable     byte
	MaximumPacketSize   uint32
	WildcardSubAvail    byte
	SubIDAvail          byte
	SharedSubAvail      byte

	// User is the user properties to encode. Decoding leaves it alone and
	// keeps the block instead (decoded), which EachUser walks, so that
	// decoding allocates nothing however many pairs a peer sends.
	User    []UserProperty
	decoded []byte
}

// UserProperty is one name and value pair.
type UserProperty struct{ Key, Value []byte }

// Has reports whether the property id is present.
func (p *Properties) Has(id byte) bool { return id <= maxPropID && p.present&(1<<id) != 0 }

// Set marks the property id present, for encoding: set its field too.
func (p *Properties) Set(id byte) { p.present |= 1 << id }

// Empty reports whether no property is present.
func (p *Properties) Empty() bool { return p.present == 0 && len(p.User) == 0 }

// EachUser calls f with each user property, in the order of the packet
// (decoded) or of User (to be encoded), until f returns false.
func (p *Properties) EachUser(f func(key, value []byte) bool) {
	for _, u := range p.User {
		if !f(u.Key, u.Value) {
			return
		}
	}
	b := p.decoded
	for len(b) > 0 {
		id := b[0]
		n, k, v := propLen(b)
		if id == PropUserProperty && !f(k, v) {
			return
		}
		b = b[n:]
	}
}

// propLen is the length of the well-formed property at the start of b
// (already checked by decodeProperties) and, for a pair, its two strings.
func propLen(b []byte) (n int, key, value []byte) {
	switch propKinds[b[0]] {
	case kindByte:
		return 2, nil, nil
	case kindU16:
		return 3, nil, nil
	case kindU32:
		return 5, nil, nil
	case kindVarInt:
		_, w, _ := readVarInt(b[1:])
		return 1 + w, nil, nil
	case kindPair:
		kl := int(binary.BigEndian.Uint16(b[1:]))
		key = b[3 : 3+kl]
		vl := int(binary.BigEndian.Uint16(b[3+kl:]))
		value = b[5+kl : 5+kl+vl]
		return 5 + kl + vl, key, value
	}
	return 3 + int(binary.BigEndian.Uint16(b[1:])), nil, nil
}

// DecodeProperties decodes the property block (its length first) at the
// start of b for ctx into p, and returns what follows it. It refuses a
// property ctx does not allow, a repeated one that must not repeat, and
// values out of their range, naming them.
func DecodeProperties(b []byte, ctx PropContext, p *Properties) ([]byte, error) {
	ids := p.SubscriptionIDs[:0]
	*p = Properties{SubscriptionIDs: ids}
	n, w, err := readVarInt(b)
	if err != nil {
		return nil, fmt.Errorf("%w: property length: %w", ErrMalformed, err)
	}
	b = b[w:]
	if int(n) > len(b) {
		return nil, fmt.Errorf("%w: properties of %d bytes, %d left", ErrMalformed, n, len(b))
	}
	block, rest := b[:n], b[n:]
	p.decoded = block
	for len(block) > 0 {
		id := block[0]
		if id > maxPropID || propKinds[id] == kindNone {
			return nil, fmt.Errorf("%w: unknown property %#x", ErrMalformed, id)
		}
		if allowedProps[ctx]&(1<<id) == 0 {
			return nil, fmt.Errorf("%w: property %#x not allowed in %s", ErrMalformed, id, ctx)
		}
		if p.present&(1<<id) != 0 && repeatable&(1<<id) == 0 {
			return nil, fmt.Errorf("%w: property %#x twice", ErrMalformed, id)
		}
		if ctx != CtxPublishOut && id == PropSubscriptionID && len(p.SubscriptionIDs) > 0 {
			return nil, fmt.Errorf("%w: subscription identifier twice", ErrMalformed)
		}
		p.present |= 1 << id
		var err error
		if block, err = p.decodeOne(id, block[1:]); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

// decodeOne decodes the value of property id from the start of b.
func (p *Properties) decodeOne(id byte, b []byte) ([]byte, error) {
	short := func() error { return fmt.Errorf("%w: property %#x cut short", ErrMalformed, id) }
	switch propKinds[id] {
	case kindByte:
		if len(b) < 1 {
			return nil, short()
		}
		v := b[0]
		if v > 1 { // every byte property is a flag, Maximum QoS too (0 or 1)
			return nil, fmt.Errorf("%w: property %#x of value %d (0 or 1)", ErrMalformed, id, v)
		}
		*p.byteField(id) = v
		return b[1:], nil
	case kindU16:
		if len(b) < 2 {
			return nil, short()
		}
		v := binary.BigEndian.Uint16(b)
		if v == 0 && (id == PropReceiveMaximum || id == PropTopicAlias) {
			return nil, fmt.Errorf("%w: property %#x of value 0", ErrMalformed, id)
		}
		*p.u16Field(id) = v
		return b[2:], nil
	case kindU32:
		if len(b) < 4 {
			return nil, short()
		}
		v := binary.BigEndian.Uint32(b)
		if v == 0 && id == PropMaximumPacketSize {
			return nil, fmt.Errorf("%w: maximum packet size 0", ErrMalformed)
		}
		*p.u32Field(id) = v
		return b[4:], nil
	case kindVarInt:
		v, w, err := readVarInt(b)
		if err != nil {
			return nil, fmt.Errorf("%w: subscription identifier: %w", ErrMalformed, err)
		}
		if v == 0 {
			return nil, fmt.Errorf("%w: subscription identifier 0", ErrMalformed)
		}
		p.SubscriptionIDs = append(p.SubscriptionIDs, v)
		return b[w:], nil
	case kindString, kindBinary:
		read := readString
		if propKinds[id] == kindBinary {
			read = readBytes
		}
		v, rest, err := read(b, propWhat[id])
		if err != nil {
			return nil, err
		}
		*p.bytesField(id) = v
		return rest, nil
	}
	// kindPair: a user property, walked later by EachUser.
	_, rest, err := readString(b, "user property name")
	if err != nil {
		return nil, err
	}
	_, rest, err = readString(rest, "user property value")
	return rest, err
}

func (p *Properties) byteField(id byte) *byte {
	switch id {
	case PropPayloadFormat:
		return &p.PayloadFormat
	case PropRequestProblemInfo:
		return &p.RequestProblemInfo
	case PropRequestResponseInfo:
		return &p.RequestResponseInfo
	case PropMaximumQoS:
		return &p.MaximumQoS
	case PropRetainAvailable:
		return &p.RetainAvailable
	case PropWildcardSubAvailable:
		return &p.WildcardSubAvail
	case PropSubIDAvailable:
		return &p.SubIDAvail
	}
	return &p.SharedSubAvail
}

func (p *Properties) u16Field(id byte) *uint16 {
	switch id {
	case PropServerKeepAlive:
		return &p.ServerKeepAlive
	case PropReceiveMaximum:
		return &p.ReceiveMaximum
	case PropTopicAliasMaximum:
		return &p.TopicAliasMaximum
	}
	return &p.TopicAlias
}

func (p *Properties) u32Field(id byte) *uint32 {
	switch id {
	case PropMessageExpiry:
		return &p.MessageExpiry
	case PropSessionExpiry:
		return &p.SessionExpiry
	case PropWillDelay:
		return &p.WillDelay
	}
	return &p.MaximumPacketSize
}

func (p *Properties) bytesField(id byte) *[]byte {
	switch id {
	case PropContentType:
		return &p.ContentType
	case PropResponseTopic:
		return &p.ResponseTopic
	case PropCorrelationData:
		return &p.CorrelationData
	case PropAssignedClientID:
		return &p.AssignedClientID
	case PropAuthMethod:
		return &p.AuthMethod
	case PropAuthData:
		return &p.AuthData
	case PropResponseInfo:
		return &p.ResponseInfo
	case PropServerReference:
		return &p.ServerReference
	}
	return &p.ReasonString
}

// propWhat names each property in errors, made once so that decoding a
// string property formats nothing unless it fails.
var propWhat = func() (w [maxPropID + 1]string) {
	for id := range w {
		w[id] = fmt.Sprintf("property %#x", id)
	}
	return w
}()

var ctxNames = [...]string{"CONNECT", "will properties", "CONNACK", "PUBLISH", "PUBLISH", "PUBACK",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "DISCONNECT", "AUTH"}

func (c PropContext) String() string {
	if int(c) < len(ctxNames) {
		return ctxNames[c]
	}
	return fmt.Sprintf("context %d", c)
}

// readVarInt decodes a variable byte integer (section 1.5.5): its value
// and width.
func readVarInt(b []byte) (v uint32, width int, err error) {
	var mult uint32 = 1
	for i := 0; i < 4; i++ {
		if i >= len(b) {
			return 0, 0, fmt.Errorf("variable byte integer cut short")
		}
		v += uint32(b[i]&0x7f) * mult
		if b[i]&0x80 == 0 {
			return v, i + 1, nil
		}
		mult *= 128
	}
	return 0, 0, fmt.Errorf("variable byte integer longer than four bytes")
}
