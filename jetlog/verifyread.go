package jetlog

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Verify reads a segment in blocks of verifyBlock bytes (more only for a
// record larger than that), so its memory does not grow with the segment.
const verifyBlock = 1 << 20

// verifyResyncSpan bounds the records a search for the next intact record
// after damage considers without an index to say where records start: a
// damaged length in the bytes it tries must not make it read up to
// maxBody for each. A larger record after damage in a segment whose
// index is damaged too is taken for part of the damage.
const verifyResyncSpan = 8 << 20

// blockReader reads one segment's bytes through a window of one block.
// The slices it returns are valid until its next call.
type blockReader struct {
	ctx   context.Context // ends the pacing's waits
	rate  int64           // bytes a second; 0: unpaced
	began time.Time       // the first read, for the pacing
	read  int64           // bytes read so far
	f     vfs.File
	size  int64 // bytes of whole records in the segment
	buf   []byte
	start int64 // offset of buf[0] in the file
	n     int   // bytes of buf read
}

func newBlockReader(ctx context.Context, rate int64) *blockReader {
	return &blockReader{ctx: ctx, rate: rate, buf: make([]byte, verifyBlock)}
}

// pace waits, after a read, until the bytes read so far fit the rate:
// a rate limit, so the wait is the point.
func (w *blockReader) pace(n int) error {
	if w.rate <= 0 {
		return nil
	}
	if w.read == 0 {
		w.began = time.Now()
	}
	w.read += int64(n)
	due := w.began.Add(time.Duration(float64(w.read) / float64(w.rate) * float64(time.Second)))
	wait := time.Until(due)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// reset points the reader at another segment.
func (w *blockReader) reset(f vfs.File, size int64) {
	w.f, w.size, w.start, w.n = f, size, 0, 0
}

// window returns the bytes from off to the end of the window, at least
// need of them unless the segment ends first.
func (w *blockReader) window(off int64, need int) ([]byte, error) {
	if off >= w.start && off+int64(need) <= w.start+int64(w.n) {
		return w.buf[off-w.start : w.n], nil
	}
	want := int64(max(need, verifyBlock))
	want = min(want, w.size-off)
	if want <= 0 {
		return nil, nil
	}
	if int64(cap(w.buf)) < want {
		w.buf = make([]byte, want) // the largest record so far
	}
	w.buf = w.buf[:cap(w.buf)]
	n, err := w.f.ReadAt(w.buf[:want], off)
	if int64(n) < want {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("short read at %d: %d of %d bytes", off, n, want)
		}
		w.n = 0
		return nil, err
	}
	w.start, w.n = off, int(want)
	if err := w.pace(n); err != nil {
		w.n = 0
		return nil, err
	}
	return w.buf[:w.n], nil
}

// record decodes the record at off, like recordAt. n is its whole
// length whenever its frame is plausible, even when it is damaged.
func (w *blockReader) record(s *sealer, off int64, lastSeq uint64, seen bool) (r record, n int, reason string, err error) {
	hdr, err := w.window(off, recordFixed)
	if err != nil {
		return record{}, 0, "", err
	}
	if len(hdr) < recordFixed {
		return record{}, 0, "short record", nil
	}
	body, ok := frameLen(hdr)
	if !ok {
		return record{}, 0, "implausible length", nil
	}
	n = frameSize + body
	if off+int64(n) > w.size {
		return record{}, 0, "length beyond segment", nil
	}
	data, err := w.window(off, n)
	if err != nil {
		return record{}, 0, "", err
	}
	r, _, reason = recordAt(s, data[:n], 0, lastSeq, seen)
	return r, n, reason, nil
}

// intact reports whether an intact record starts at off, without opening
// a sealed one (that is done once, in place, when it is decoded). Frames
// longer than limit are not considered.
func (w *blockReader) intact(s *sealer, off int64, limit int) (bool, error) {
	hdr, err := w.window(off, recordFixed)
	if err != nil || len(hdr) < recordFixed {
		return false, err
	}
	if s == nil && hdr[8] != kindMsg && hdr[8] != kindDelete {
		return false, nil // cheap: most offsets fail here
	}
	body, ok := frameLen(hdr)
	n := frameSize + body
	if !ok || n > limit || off+int64(n) > w.size {
		return false, nil
	}
	data, err := w.window(off, n)
	if err != nil {
		return false, err
	}
	if s != nil {
		return s.frame(data[:n]) == "", nil
	}
	_, _, reason := recordAt(nil, data[:n], 0, 0, false)
	return reason == "", nil
}

// resync returns where intact records start again after damage at pos:
// the next index entry past it whose record is intact, else the next
// offset where one starts, or -1 when none does.
func (w *blockReader) resync(s *sealer, entries []verifyEntry, pos, size int64) (int64, error) {
	for _, e := range entries {
		if e.off <= pos {
			continue
		}
		ok, err := w.intact(s, e.off, maxBody+frameSize)
		if err != nil || ok {
			return e.off, err
		}
	}
	for p := pos + 1; p+recordFixed <= size; p++ {
		ok, err := w.intact(s, p, verifyResyncSpan)
		if err != nil {
			return -1, err
		}
		if ok {
			return p, nil
		}
	}
	return -1, nil
}
