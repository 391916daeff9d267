package mqtt

import (
	"bytes"
	"io"
	"testing"
)

// fuzzMax is the maximum packet size the fuzz targets read with: small,
// so that the fuzzer reaches it often.
const fuzzMax = 512

// decodeAll reads packets from r until an error and decodes each body as
// the server would, returning a transcript to compare readers by.
func decodeAll(t *testing.T, r *Reader) []string {
	var out []string
	for {
		h, body, err := r.Next()
		if len(r.buf) > fuzzMax {
			t.Fatalf("reader buffer %d bytes, limit %d", len(r.buf), fuzzMax)
		}
		if err != nil {
			// A reader that hit the end inside a packet says
			// ErrUnexpectedEOF whether it was fed whole or in pieces.
			return append(out, "end: "+err.Error())
		}
		out = append(out, h.Type.String()+": "+decodeBody(h, body))
	}
}

func decodeBody(h Header, body []byte) string {
	var err error
	switch h.Type {
	case CONNECT:
		var c Connect
		err = DecodeConnect(body, &c)
		if err == nil {
			_, err = TopicToSubject(nil, c.WillTopic)
		}
	case PUBLISH:
		var p Publish
		if err = DecodePublish(h.Flags, body, &p); err == nil {
			_, err = TopicToSubject(nil, p.Topic)
			if err == nil && !bytes.Equal(AppendPublish(nil, &p)[h.Len:], body) {
				return "re-encoding differs"
			}
		}
	case PUBACK, PUBREC, PUBREL, PUBCOMP:
		_, err = DecodePacketID(h.Type, body)
	case SUBSCRIBE, UNSUBSCRIBE:
		var f Filters
		if f, err = DecodeFilters(h.Type, body); err == nil {
			for filter, _, ok := f.Next(); ok; filter, _, ok = f.Next() {
				_, _, _ = FilterToSubject(nil, filter)
			}
			err = f.Err()
		}
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}

// chunked hands out data in pieces whose sizes cycle through sizes.
type chunked struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%17 + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// FuzzReader feeds a byte stream to the Reader whole and in chunks: the
// two must see the same packets and the same errors, nothing panics, and
// the buffer never outgrows the maximum packet size. The corpus holds
// the packet shapes of the reference's MQTT advisories (see
// docs/mqtt.md, "Advisories").
func FuzzReader(f *testing.F) {
	f.Add(connectPacket(), []byte{3})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		whole := decodeAll(t, NewReader(bytes.NewReader(data), fuzzMax))
		pieces := decodeAll(t, NewReader(&chunked{data: data, sizes: sizes}, fuzzMax))
		if len(whole) != len(pieces) {
			t.Fatalf("whole %q\npieces %q", whole, pieces)
		}
		for i := range whole {
			if whole[i] != pieces[i] {
				t.Fatalf("packet %d: whole %q, pieces %q", i, whole[i], pieces[i])
			}
		}
	})
}
