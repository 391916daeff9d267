package jetlog

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Segment file naming. Part of the disk format (see doc.go).
const (
	segSuffix = ".seg"
	idxSuffix = ".idx"
	idWidth   = 16 // zero-padded decimal id, so names sort by id
)

// segment is one file of the log. The appender alone writes it; readers
// use ReadAt on the records the log has published.
type segment struct {
	id   uint64
	name string // base name, e.g. "0000000000000001.seg"
	f    vfs.File

	// Owned by the appender (and by Open before it starts).
	size int64 // bytes of whole records in the file
	// alloc is the file's length when space was reserved past size
	// (preallocate); the bytes between read as zeros.
	alloc int64

	section // the catalog's view of this segment, guarded by Log.mu

	// refs counts the log's own reference plus readers in flight; the file
	// is closed when it drops to zero.
	refs atomic.Int32
}

func segName(id uint64) string {
	return fmt.Sprintf("%0*d%s", idWidth, id, segSuffix)
}

func idxName(id uint64) string {
	return fmt.Sprintf("%0*d%s", idWidth, id, idxSuffix)
}

// parseSegName returns the id of a segment file name.
func parseSegName(name string) (uint64, bool) {
	base, ok := strings.CutSuffix(name, segSuffix)
	if !ok || len(base) != idWidth {
		return 0, false
	}
	id, err := strconv.ParseUint(base, 10, 64)
	return id, err == nil
}

func newSegment(id uint64, f vfs.File, size int64) *segment {
	s := &segment{id: id, name: segName(id), f: f, size: size}
	s.bySubj = map[*subjectState][]uint64{}
	s.indexed = -1
	s.loaded.Store(true)
	s.refs.Store(1)
	return s
}

// acquire takes a reader reference, which keeps the file open (a file
// cache's too) until done. The caller holds Log.mu (read or write) and
// found s in Log.segs, so the log's reference is still held.
func (s *segment) acquire() {
	s.refs.Add(1)
	if cf, ok := s.f.(*cachedFile); ok {
		cf.hold()
	}
}

// done drops a reader reference taken by acquire.
func (s *segment) done() error {
	if cf, ok := s.f.(*cachedFile); ok {
		cf.unhold()
	}
	return s.release()
}

// release drops a reference and closes the file with the last one.
func (s *segment) release() error {
	if s.refs.Add(-1) == 0 {
		return s.f.Close()
	}
	return nil
}

// readRecord reads and verifies the record at off of the given size,
// opening it with sl (nil: a plaintext stream).
func (s *segment) readRecord(sl *sealer, buf []byte, off int64) (record, error) {
	n, err := s.f.ReadAt(buf, off)
	if n != len(buf) {
		if err == nil {
			err = fmt.Errorf("short read")
		}
		return record{}, fmt.Errorf("jetlog: read %s at %d: %w", s.name, off, err)
	}
	r, reason := sl.decode(buf)
	if reason != "" {
		return record{}, &CorruptError{Segment: s.name, Offset: off, Reason: reason}
	}
	return r, nil
}

func segPath(dir, name string) string { return path.Join(dir, name) }

// openSegmentFile opens an existing segment for reading and writing,
// through the file cache if the log has one.
func (l *Log) openSegmentFile(name string) (vfs.File, error) {
	if l.files != nil {
		return l.files.file(l.fs, segPath(l.dir, name), l.durability() == DurabilityNone)
	}
	return l.fs.OpenFile(segPath(l.dir, name), os.O_RDWR, 0)
}

// createSegmentFile creates a new segment, handing it to the file cache
// if the log has one.
func (l *Log) createSegmentFile(name string) (vfs.File, error) {
	f, err := l.fs.Create(segPath(l.dir, name))
	if err != nil || l.files == nil {
		return f, err
	}
	return l.files.adopt(l.fs, segPath(l.dir, name), f, l.durability() == DurabilityNone), nil
}
