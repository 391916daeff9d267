package mqtt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// ProtocolLevel311 is MQTT 3.1.1's protocol level; 5 is MQTT 5's.
const ProtocolLevel311 = 4

// Connect is a decoded CONNECT. Its slices alias the packet body.
// Props and WillProps are MQTT 5's (level 5) and empty at level 4.
type Connect struct {
	Level        byte
	Props        Properties
	WillProps    Properties
	CleanSession bool
	KeepAlive    uint16 // seconds; 0 turns the keepalive off
	ClientID     []byte
	HasWill      bool
	WillQoS      byte
	WillRetain   bool
	WillTopic    []byte
	WillMessage  []byte
	HasUsername  bool
	Username     []byte
	HasPassword  bool
	Password     []byte
}

// DecodeConnect decodes a CONNECT body into c, at protocol level 4
// (MQTT 3.1.1) or 5 (MQTT 5). Another protocol name or level returns
// ErrUnsupported with c.Level set, so that the caller can answer as the
// specification asks (CONNACK 0x01 for MQTT at another level).
func DecodeConnect(body []byte, c *Connect) error {
	*c = Connect{}
	name, rest, err := readString(body, "protocol name")
	if err != nil {
		return err
	}
	if len(rest) < 1 {
		return fmt.Errorf("%w: CONNECT ends before the protocol level", ErrMalformed)
	}
	c.Level, rest = rest[0], rest[1:]
	if string(name) != "MQTT" || (c.Level != ProtocolLevel311 && c.Level != ProtocolLevel5) {
		return fmt.Errorf("%w: protocol %q level %d", ErrUnsupported, name, c.Level)
	}
	if len(rest) < 3 {
		return fmt.Errorf("%w: CONNECT ends before the keepalive", ErrMalformed)
	}
	flags := rest[0]
	c.KeepAlive = binary.BigEndian.Uint16(rest[1:3])
	rest = rest[3:]
	if flags&0x01 != 0 {
		return fmt.Errorf("%w: CONNECT reserved flag set", ErrMalformed)
	}
	c.CleanSession = flags&0x02 != 0
	c.HasWill = flags&0x04 != 0
	c.WillQoS = (flags >> 3) & 3
	c.WillRetain = flags&0x20 != 0
	c.HasPassword = flags&0x40 != 0
	c.HasUsername = flags&0x80 != 0
	if !c.HasWill && (c.WillQoS != 0 || c.WillRetain) {
		return fmt.Errorf("%w: will QoS or retain without a will", ErrMalformed)
	}
	if c.WillQoS == 3 {
		return fmt.Errorf("%w: will QoS 3", ErrMalformed)
	}
	if c.HasPassword && !c.HasUsername && c.Level == ProtocolLevel311 { // MQTT 5 allows it
		return fmt.Errorf("%w: password without a user name", ErrMalformed)
	}
	if c.Level == ProtocolLevel5 {
		if rest, err = DecodeProperties(rest, CtxConnect, &c.Props); err != nil {
			return err
		}
	}
	if c.ClientID, rest, err = readString(rest, "client id"); err != nil {
		return err
	}
	if c.HasWill {
		if c.Level == ProtocolLevel5 {
			if rest, err = DecodeProperties(rest, CtxWill, &c.WillProps); err != nil {
				return err
			}
		}
		if c.WillTopic, rest, err = readString(rest, "will topic"); err != nil {
			return err
		}
		if c.WillMessage, rest, err = readBytes(rest, "will message"); err != nil {
			return err
		}
	}
	if c.HasUsername {
		if c.Username, rest, err = readString(rest, "user name"); err != nil {
			return err
		}
	}
	if c.HasPassword {
		if c.Password, rest, err = readBytes(rest, "password"); err != nil {
			return err
		}
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: %d bytes after the CONNECT payload", ErrMalformed, len(rest))
	}
	return nil
}

// Publish is a decoded PUBLISH. Topic and Payload alias the packet body.
// Props is MQTT 5's (DecodePublish5, AppendPublish5).
type Publish struct {
	Props    Properties
	QoS      byte
	Dup      bool
	Retain   bool
	Topic    []byte
	PacketID uint16 // 0 for QoS 0
	Payload  []byte
}

// DecodePublish decodes a PUBLISH body, with the fixed header's flags.
func DecodePublish(flags byte, body []byte, p *Publish) error {
	rest, err := decodePublishHead(flags, body, p)
	p.Payload = rest
	return err
}

// decodePublishHead decodes the flags, topic and packet id of a PUBLISH
// (the same at every level) and returns what follows them.
func decodePublishHead(flags byte, body []byte, p *Publish) ([]byte, error) {
	p.QoS = (flags >> 1) & 3
	p.Dup = flags&0x08 != 0
	p.Retain = flags&0x01 != 0
	p.PacketID = 0
	topic, rest, err := readString(body, "topic")
	if err != nil {
		return nil, err
	}
	p.Topic = topic
	if p.QoS > 0 {
		if p.PacketID, rest, err = readPacketID(rest, PUBLISH); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

// DecodePacketID decodes the body of PUBACK, PUBREC, PUBREL and PUBCOMP:
// exactly a non-zero packet identifier.
func DecodePacketID(t PacketType, body []byte) (uint16, error) {
	id, rest, err := readPacketID(body, t)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%w: %s of %d bytes, want 2", ErrMalformed, t, len(body))
	}
	return id, err
}

// Filters walks the topic filters of a SUBSCRIBE or UNSUBSCRIBE without
// allocating: call Next until it returns false, then Err.
type Filters struct {
	PacketID  uint16
	Props     Properties // MQTT 5's (DecodeFilters5)
	subscribe bool
	v5        bool
	options   SubOptions
	rest      []byte
	err       error
}

// DecodeFilters checks a SUBSCRIBE or UNSUBSCRIBE body's packet id and
// that it has at least one filter ([MQTT-3.8.3-3], [MQTT-3.10.3-2]).
func DecodeFilters(t PacketType, body []byte) (Filters, error) {
	id, rest, err := readPacketID(body, t)
	if err != nil {
		return Filters{}, err
	}
	if len(rest) == 0 {
		return Filters{}, fmt.Errorf("%w: %s without a topic filter", ErrMalformed, t)
	}
	return Filters{PacketID: id, subscribe: t == SUBSCRIBE, rest: rest}, nil
}

// Next returns the next filter and, for SUBSCRIBE, its requested QoS.
func (f *Filters) Next() (filter []byte, qos byte, ok bool) {
	if f.err != nil || len(f.rest) == 0 {
		return nil, 0, false
	}
	filter, rest, err := readString(f.rest, "topic filter")
	if err != nil {
		f.err = err
		return nil, 0, false
	}
	if f.subscribe {
		if len(rest) < 1 {
			f.err = fmt.Errorf("%w: SUBSCRIBE filter without a QoS", ErrMalformed)
			return nil, 0, false
		}
		var opts byte
		if opts, rest = rest[0], rest[1:]; !f.v5 && opts > 2 {
			f.err = fmt.Errorf("%w: SUBSCRIBE QoS byte %#x", ErrMalformed, opts)
			return nil, 0, false
		}
		if f.options, f.err = decodeSubOptions(opts); f.err != nil {
			return nil, 0, false
		}
		qos = f.options.QoS
	}
	f.rest = rest
	return filter, qos, true
}

// Err is the error that stopped Next, if any.
func (f *Filters) Err() error { return f.err }

func readPacketID(b []byte, t PacketType) (uint16, []byte, error) {
	if len(b) < 2 {
		return 0, nil, fmt.Errorf("%w: %s ends before its packet id", ErrMalformed, t)
	}
	id := binary.BigEndian.Uint16(b)
	if id == 0 {
		return 0, nil, fmt.Errorf("%w: %s with packet id 0", ErrMalformed, t)
	}
	return id, b[2:], nil
}

func readBytes(b []byte, what string) ([]byte, []byte, error) {
	if len(b) < 2 {
		return nil, nil, fmt.Errorf("%w: packet ends before the %s length", ErrMalformed, what)
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b)-2 < n {
		return nil, nil, fmt.Errorf("%w: %s of %d bytes, %d left", ErrMalformed, what, n, len(b)-2)
	}
	return b[2 : 2+n], b[2+n:], nil
}

// readString is readBytes for the UTF-8 strings of section 1.5.3, which
// must be well formed and hold no U+0000 ([MQTT-1.5.3-1], [MQTT-1.5.3-2]).
func readString(b []byte, what string) ([]byte, []byte, error) {
	s, rest, err := readBytes(b, what)
	if err != nil {
		return nil, nil, err
	}
	if !utf8.Valid(s) || bytes.IndexByte(s, 0) >= 0 {
		return nil, nil, fmt.Errorf("%w: %s is not valid UTF-8", ErrMalformed, what)
	}
	return s, rest, nil
}
