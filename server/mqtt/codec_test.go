package mqtt

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func connectPacket() []byte {
	return AppendConnect(nil, &Connect{
		CleanSession: true, KeepAlive: 30, ClientID: []byte("dev-1"),
		HasWill: true, WillQoS: 1, WillTopic: []byte("dev/1/status"), WillMessage: []byte("gone"),
		HasUsername: true, Username: []byte("alice"), HasPassword: true, Password: []byte("s3cret"),
	})
}

func TestConnectRoundTrip(t *testing.T) {
	r := NewReader(bytes.NewReader(connectPacket()), 1024)
	h, body, err := r.Next()
	if err != nil || h.Type != CONNECT {
		t.Fatalf("Next: %v %v", h, err)
	}
	var c Connect
	if err := DecodeConnect(body, &c); err != nil {
		t.Fatal(err)
	}
	if !c.CleanSession || c.KeepAlive != 30 || string(c.ClientID) != "dev-1" || !c.HasWill ||
		c.WillQoS != 1 || string(c.WillTopic) != "dev/1/status" || string(c.WillMessage) != "gone" ||
		string(c.Username) != "alice" || string(c.Password) != "s3cret" {
		t.Fatalf("decoded %+v", c)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last packet: %v, want EOF", err)
	}
}

func TestConnectProtocolLevel6(t *testing.T) {
	pkt := AppendConnect(nil, &Connect{Level: 6, ClientID: []byte("x")})
	h, err := ParseHeader(pkt, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var c Connect
	if err := DecodeConnect(pkt[h.Len:], &c); !errors.Is(err, ErrUnsupported) || c.Level != 6 {
		t.Fatalf("level 6: %v, level %d", err, c.Level)
	}
}

func TestConnectRefusals(t *testing.T) {
	base := func(flags byte) []byte {
		b := []byte{0, 4, 'M', 'Q', 'T', 'T', 4, flags, 0, 10, 0, 1, 'x'}
		return b
	}
	cases := map[string][]byte{
		"reserved flag":         base(0x01),
		"password without user": append(base(0x40), 0, 1, 'p'),
		"will qos without will": base(0x08),
		"will qos 3":            base(0x1c),
		"trailing bytes":        append(base(0x00), 9),
		"short":                 {0, 4, 'M', 'Q'},
		"nul in client id":      {0, 4, 'M', 'Q', 'T', 'T', 4, 0, 0, 10, 0, 1, 0},
		"bad utf8":              {0, 4, 'M', 'Q', 'T', 'T', 4, 0, 0, 10, 0, 1, 0xff},
	}
	for name, body := range cases {
		var c Connect
		if err := DecodeConnect(body, &c); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestHeaderRefusals(t *testing.T) {
	cases := map[string]struct {
		b    []byte
		want error
	}{
		"five length bytes": {[]byte{0x30, 0x80, 0x80, 0x80, 0x80, 0x01}, ErrMalformed},
		"hostile length":    {[]byte{0x30, 0xff, 0xff, 0xff, 0x7f}, ErrTooLarge},
		"qos 3":             {[]byte{0x36, 0}, ErrMalformed},
		"qos 0 dup":         {[]byte{0x38, 0}, ErrMalformed},
		"subscribe flags":   {[]byte{0x80, 0}, ErrMalformed},
		"pingreq flags":     {[]byte{0xc1, 0}, ErrMalformed},
		"type 0":            {[]byte{0x00, 0}, ErrMalformed},
		"auth flags":        {[]byte{0xf1, 0}, ErrMalformed},
		"one byte":          {[]byte{0x30}, ErrIncomplete},
		"length cut":        {[]byte{0x30, 0x80}, ErrIncomplete},
	}
	for name, c := range cases {
		if _, err := ParseHeader(c.b, 1<<20); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// TestReaderHostileLength: a header announcing 256 MB is refused before
// any of it is read or allocated.
func TestReaderHostileLength(t *testing.T) {
	r := NewReader(io.MultiReader(bytes.NewReader([]byte{0x30, 0xff, 0xff, 0xff, 0x7f}), zeros{}), 64<<10)
	if _, _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if len(r.buf) > 64<<10 {
		t.Fatalf("buffer grew to %d", len(r.buf))
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestPublishAndFilters(t *testing.T) {
	var wire []byte
	wire = AppendPublish(wire, &Publish{QoS: 1, Retain: true, Topic: []byte("a/b"), PacketID: 7, Payload: []byte("hi")})
	wire = AppendSubscribe(wire, 9, [][]byte{[]byte("a/#"), []byte("+/x")}, []byte{1, 0})
	wire = AppendSubscribe(wire, 10, [][]byte{[]byte("a/#")}, nil)
	wire = AppendAck(wire, PUBREL, 7)
	wire = append(wire, byte(PINGREQ)<<4, 0, byte(DISCONNECT)<<4, 0)
	r := NewReader(bytes.NewReader(wire), 1024)

	h, body, _ := r.Next()
	var p Publish
	if err := DecodePublish(h.Flags, body, &p); err != nil || p.QoS != 1 || !p.Retain || p.PacketID != 7 ||
		string(p.Topic) != "a/b" || string(p.Payload) != "hi" {
		t.Fatalf("publish %+v %v", p, err)
	}
	h, body, _ = r.Next()
	f, err := DecodeFilters(h.Type, body)
	if err != nil || f.PacketID != 9 {
		t.Fatalf("subscribe: %v", err)
	}
	var got []string
	for filter, qos, ok := f.Next(); ok; filter, qos, ok = f.Next() {
		got = append(got, string(filter)+string('0'+qos))
	}
	if f.Err() != nil || len(got) != 2 || got[0] != "a/#1" || got[1] != "+/x0" {
		t.Fatalf("filters %v %v", got, f.Err())
	}
	h, body, _ = r.Next()
	if f, err = DecodeFilters(h.Type, body); err != nil || h.Type != UNSUBSCRIBE {
		t.Fatalf("unsubscribe: %v", err)
	}
	if filter, _, ok := f.Next(); !ok || string(filter) != "a/#" {
		t.Fatalf("unsubscribe filter %q", filter)
	}
	h, body, _ = r.Next()
	if id, err := DecodePacketID(h.Type, body); err != nil || h.Type != PUBREL || id != 7 {
		t.Fatalf("pubrel %d %v", id, err)
	}
	for _, want := range []PacketType{PINGREQ, DISCONNECT} {
		if h, _, err := r.Next(); err != nil || h.Type != want {
			t.Fatalf("got %v %v, want %v", h.Type, err, want)
		}
	}
}

func TestPacketIDZeroRefused(t *testing.T) {
	var p Publish
	if err := DecodePublish(0x02, []byte{0, 1, 'a', 0, 0}, &p); !errors.Is(err, ErrMalformed) {
		t.Fatalf("QoS 1 with id 0: %v", err)
	}
	if _, err := DecodeFilters(SUBSCRIBE, []byte{0, 1}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("SUBSCRIBE without filters: %v", err)
	}
	f, _ := DecodeFilters(SUBSCRIBE, []byte{0, 1, 0, 1, 'a', 3})
	if _, _, ok := f.Next(); ok || !errors.Is(f.Err(), ErrMalformed) {
		t.Fatalf("SUBSCRIBE QoS 3: %v", f.Err())
	}
}

// BenchmarkDecodePublish: reading and decoding a PUBLISH from a
// connection allocates nothing.
func BenchmarkDecodePublish(b *testing.B) {
	pkt := AppendPublish(nil, &Publish{QoS: 1, Topic: []byte("sensors/1/temp"), PacketID: 1, Payload: make([]byte, 64)})
	src := &repeatReader{pkt: pkt}
	r := NewReader(src, 1<<20)
	var p Publish
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		h, body, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if err := DecodePublish(h.Flags, body, &p); err != nil {
			b.Fatal(err)
		}
	}
}

type repeatReader struct {
	pkt []byte
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.pkt[r.off:])
		n += c
		r.off = (r.off + c) % len(r.pkt)
	}
	return n, nil
}
