package mqtt

import (
	"fmt"
	"unicode/utf8"
)

// SubOptions are a SUBSCRIBE filter's options byte (MQTT 5's section
// 3.8.3.1; at level 4 only QoS is ever set).
type SubOptions struct {
	QoS               byte
	NoLocal           bool
	RetainAsPublished bool
	RetainHandling    byte // 0 send retained at subscribe, 1 only if new, 2 never
}

// Byte is the options as the wire writes them.
func (o SubOptions) Byte() byte {
	b := o.QoS | o.RetainHandling<<4
	if o.NoLocal {
		b |= 0x04
	}
	if o.RetainAsPublished {
		b |= 0x08
	}
	return b
}

func decodeSubOptions(b byte) (SubOptions, error) {
	o := SubOptions{QoS: b & 3, NoLocal: b&0x04 != 0, RetainAsPublished: b&0x08 != 0, RetainHandling: (b >> 4) & 3}
	switch {
	case o.QoS == 3:
		return SubOptions{}, fmt.Errorf("%w: SUBSCRIBE QoS 3", ErrMalformed)
	case o.RetainHandling == 3:
		return SubOptions{}, fmt.Errorf("%w: SUBSCRIBE retain handling 3", ErrMalformed)
	case b&0xc0 != 0:
		return SubOptions{}, fmt.Errorf("%w: SUBSCRIBE options reserved bits %#x", ErrMalformed, b)
	}
	return o, nil
}

// Options is the options of the filter Next returned last.
func (f *Filters) Options() SubOptions { return f.options }

// DecodeFilters5 is DecodeFilters for MQTT 5: the packet id, then the
// property block (into f.Props), then the filters with their options.
func DecodeFilters5(t PacketType, body []byte) (Filters, error) {
	id, rest, err := readPacketID(body, t)
	if err != nil {
		return Filters{}, err
	}
	f := Filters{PacketID: id, subscribe: t == SUBSCRIBE, v5: true}
	ctx := CtxUnsubscribe
	if f.subscribe {
		ctx = CtxSubscribe
	}
	if rest, err = DecodeProperties(rest, ctx, &f.Props); err != nil {
		return Filters{}, err
	}
	if len(rest) == 0 {
		return Filters{}, fmt.Errorf("%w: %s without a topic filter", ErrMalformed, t)
	}
	f.rest = rest
	return f, nil
}

// DecodePublish5 decodes an MQTT 5 PUBLISH body, with the fixed header's
// flags, for ctx (CtxPublishIn for a client's). Its topic may be empty
// when it carries a topic alias (the caller resolves it).
func DecodePublish5(flags byte, body []byte, ctx PropContext, p *Publish) error {
	rest, err := decodePublishHead(flags, body, p)
	if err != nil {
		return err
	}
	if rest, err = DecodeProperties(rest, ctx, &p.Props); err != nil {
		return err
	}
	if len(p.Topic) == 0 && !p.Props.Has(PropTopicAlias) {
		return fmt.Errorf("%w: PUBLISH without a topic or a topic alias", ErrMalformed)
	}
	p.Payload = rest
	return nil
}

// PayloadFormatValid reports whether a PUBLISH that says its payload is
// UTF-8 (payload format 1) holds valid UTF-8 ([MQTT-3.3.2-4]).
func (p *Publish) PayloadFormatValid() bool {
	return p.Props.PayloadFormat != 1 || utf8.Valid(p.Payload)
}

// DecodeAck5 decodes an MQTT 5 PUBACK, PUBREC, PUBREL or PUBCOMP: the
// packet id, then a reason code and properties when the packet is longer
// (section 3.4.2.1: a remaining length of 2 means success).
func DecodeAck5(t PacketType, body []byte, props *Properties) (id uint16, reason byte, err error) {
	id, rest, err := readPacketID(body, t)
	if err != nil {
		return 0, 0, err
	}
	*props = Properties{}
	if len(rest) == 0 {
		return id, ReasonSuccess, nil
	}
	reason, rest = rest[0], rest[1:]
	if !validReason(t, reason) {
		return 0, 0, fmt.Errorf("%w: %s reason code %#x", ErrMalformed, t, reason)
	}
	if len(rest) > 0 {
		if rest, err = DecodeProperties(rest, CtxPubResponse, props); err != nil {
			return 0, 0, err
		}
	}
	if len(rest) != 0 {
		return 0, 0, fmt.Errorf("%w: %d bytes after the %s properties", ErrMalformed, len(rest), t)
	}
	return id, reason, nil
}

// DecodeReasoned decodes an MQTT 5 DISCONNECT or AUTH body: a reason code
// and properties, both optional (an empty body is success).
func DecodeReasoned(t PacketType, body []byte, props *Properties) (reason byte, err error) {
	*props = Properties{}
	if len(body) == 0 {
		return ReasonSuccess, nil
	}
	reason = body[0]
	if !validReason(t, reason) {
		return 0, fmt.Errorf("%w: %s reason code %#x", ErrMalformed, t, reason)
	}
	ctx := CtxDisconnect
	if t == AUTH {
		ctx = CtxAuth
	}
	rest := body[1:]
	if len(rest) > 0 {
		if rest, err = DecodeProperties(rest, ctx, props); err != nil {
			return 0, err
		}
	}
	if len(rest) != 0 {
		return 0, fmt.Errorf("%w: %d bytes after the %s properties", ErrMalformed, len(rest), t)
	}
	return reason, nil
}
