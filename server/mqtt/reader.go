package mqtt

import (
	"errors"
	"io"
)

// readerStart is the buffer a Reader starts with: enough for the
// CONNECT, PINGREQ and small PUBLISH packets most devices send.
const readerStart = 4096

// Reader splits a byte stream into MQTT packets. Its buffer grows to the
// size of the largest packet seen, never beyond max, and only once that
// packet's header has been checked against max.
type Reader struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int // unread bytes are buf[start:end]
}

// NewReader reads packets of at most max bytes (fixed header included).
func NewReader(r io.Reader, max int) *Reader {
	if max > MaxRemainingLength+5 {
		max = MaxRemainingLength + 5
	}
	return &Reader{r: r, max: max, buf: make([]byte, min(readerStart, max))}
}

// SetMax changes the largest packet Next accepts from now on: a server
// reads a peer's CONNECT under a small bound and what follows under its
// payload limit. The buffer is not shrunk.
func (r *Reader) SetMax(max int) {
	r.max = min(max, MaxRemainingLength+5)
}

// Next returns the next packet's header and body. The body aliases the
// Reader's buffer and is valid until the next call.
func (r *Reader) Next() (Header, []byte, error) {
	for {
		h, err := ParseHeader(r.buf[r.start:r.end], r.max)
		if err == nil && r.end-r.start >= h.Size() {
			body := r.buf[r.start+h.Len : r.start+h.Size()]
			r.start += h.Size()
			return h, body, nil
		}
		if err != nil && !errors.Is(err, ErrIncomplete) {
			return Header{}, nil, err
		}
		need := 5 // the longest fixed header
		if err == nil {
			need = h.Size()
		}
		if err := r.fill(need); err != nil {
			return Header{}, nil, err
		}
	}
}

// fill reads at least one more byte, first making room for need bytes
// from start: sliding what is unread to the front, growing when the
// packet is larger than the buffer.
func (r *Reader) fill(need int) error {
	if r.start == r.end {
		r.start, r.end = 0, 0
	}
	if r.start+need > len(r.buf) {
		if need > len(r.buf) {
			grown := make([]byte, max(need, min(2*len(r.buf), r.max)))
			r.end = copy(grown, r.buf[r.start:r.end])
			r.buf = grown
		} else {
			r.end = copy(r.buf, r.buf[r.start:r.end])
		}
		r.start = 0
	}
	var n int
	var err error
	// A reader may return nothing and no error now and then; a hundred
	// times in a row is a broken one (bufio's rule).
	for tries := 0; n == 0 && err == nil && tries < 100; tries++ {
		n, err = r.r.Read(r.buf[r.end:])
	}
	r.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	if errors.Is(err, io.EOF) && r.end > r.start {
		return io.ErrUnexpectedEOF
	}
	return err
}
