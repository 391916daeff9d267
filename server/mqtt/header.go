package mqtt

import (
	"errors"
	"fmt"
)

// PacketType is the high nibble of an MQTT fixed header.
type PacketType byte

// The MQTT control packet types (3.1.1's section 2.2.1; AUTH is MQTT 5's).
const (
	CONNECT     PacketType = 1
	CONNACK     PacketType = 2
	PUBLISH     PacketType = 3
	PUBACK      PacketType = 4
	PUBREC      PacketType = 5
	PUBREL      PacketType = 6
	PUBCOMP     PacketType = 7
	SUBSCRIBE   PacketType = 8
	SUBACK      PacketType = 9
	UNSUBSCRIBE PacketType = 10
	UNSUBACK    PacketType = 11
	PINGREQ     PacketType = 12
	PINGRESP    PacketType = 13
	DISCONNECT  PacketType = 14
	AUTH        PacketType = 15 // MQTT 5 only
)

var typeNames = [...]string{"RESERVED", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC",
	"PUBREL", "PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ",
	"PINGRESP", "DISCONNECT", "AUTH"}

func (t PacketType) String() string { return typeNames[t&0x0f] }

// MaxRemainingLength is the largest length four length bytes can say.
const MaxRemainingLength = 268_435_455

// Errors the codec returns. ErrIncomplete is not an error of the peer:
// it asks for more bytes.
var (
	ErrIncomplete  = errors.New("mqtt: incomplete packet")
	ErrMalformed   = errors.New("mqtt: malformed packet")
	ErrTooLarge    = errors.New("mqtt: packet larger than the maximum packet size")
	ErrUnsupported = errors.New("mqtt: unsupported protocol level")
)

// Header is a decoded fixed header.
type Header struct {
	Type      PacketType
	Flags     byte // the low nibble
	Remaining int  // bytes after the fixed header
	Len       int  // bytes of the fixed header itself (2 to 5)
}

// Size is the whole packet's length on the wire.
func (h Header) Size() int { return h.Len + h.Remaining }

// ParseHeader decodes the fixed header at the start of b. It returns
// ErrIncomplete when b ends inside the header, and refuses a packet whose
// whole size would exceed max before anyone reads or allocates its body.
func ParseHeader(b []byte, max int) (Header, error) {
	if len(b) < 2 {
		return Header{}, ErrIncomplete
	}
	h := Header{Type: PacketType(b[0] >> 4), Flags: b[0] & 0x0f}
	mult := 1
	for i := 1; ; i++ {
		if i > 4 {
			return Header{}, fmt.Errorf("%w: remaining length longer than four bytes", ErrMalformed)
		}
		if i >= len(b) {
			return Header{}, ErrIncomplete
		}
		h.Remaining += int(b[i]&0x7f) * mult
		if b[i]&0x80 == 0 {
			h.Len = i + 1
			break
		}
		mult *= 128
	}
	if err := checkFlags(h); err != nil {
		return Header{}, err
	}
	if h.Size() > max {
		return Header{}, fmt.Errorf("%w: %s of %d bytes, limit %d", ErrTooLarge, h.Type, h.Size(), max)
	}
	return h, nil
}

// checkFlags applies the fixed-header flag rules of section 2.2.2: a
// server closes the connection on any other value.
func checkFlags(h Header) error {
	switch h.Type {
	case PUBLISH:
		qos := (h.Flags >> 1) & 3
		if qos == 3 {
			return fmt.Errorf("%w: PUBLISH with QoS 3", ErrMalformed)
		}
		if qos == 0 && h.Flags&0x08 != 0 {
			return fmt.Errorf("%w: PUBLISH QoS 0 with DUP set", ErrMalformed)
		}
		return nil
	case PUBREL, SUBSCRIBE, UNSUBSCRIBE:
		if h.Flags != 0x02 {
			return fmt.Errorf("%w: %s flags %#x, want 0x2", ErrMalformed, h.Type, h.Flags)
		}
		return nil
	case CONNECT, CONNACK, PUBACK, PUBREC, PUBCOMP, SUBACK, UNSUBACK, PINGREQ, PINGRESP, DISCONNECT, AUTH:
		if h.Flags != 0 {
			return fmt.Errorf("%w: %s flags %#x, want 0", ErrMalformed, h.Type, h.Flags)
		}
		return nil
	}
	return fmt.Errorf("%w: packet type %d", ErrMalformed, h.Type)
}
