package jetlog

import (
	"fmt"
	"io"

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
	f     vfs.File
	size  int64 // bytes of whole records in the segment
	buf   []byte
	start int64 // offset of buf[0] in the file
	n     int   // bytes of buf read
}

func newBlockReader() *blockReader { return &blockReader{buf: make([]byte, verifyBlock)} }

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
