package jetlog

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Preallocation. An append that grows a file makes its fdatasync commit
// the new size and block allocation too; on ext4 that is a third of the
// cost of a lone synchronous publish (about 200 µs against 145 µs on this
// project's machines). So the active segment reserves space ahead of its
// writes, in steps that grow with the segment: a stream that holds little
// reserves little (at most as much again as it holds, 64 KiB at least),
// and a busy one extends its file once every 4 MiB.
//
// The reserved bytes read as zeros. Recovery takes a tail of zeros after
// the last whole record for reserved space, not damage (a record's frame
// is never all zeros), and a sealed segment and a cleanly closed one are
// trimmed to their records, so that only the active segment of a stream
// that crashed ever holds reserved space on disk.
const (
	minAllocStep = 64 << 10
	maxAllocStep = 4 << 20
)

// preallocate reserves space for n more bytes of seg, if its file can and
// this log syncs at all (without syncs there is nothing to make cheaper).
// A failure (a full disk, a file system without fallocate) is not an
// error here: the write that follows extends the file as it would have,
// and reports the full disk if that is what it was.
func (l *Log) preallocate(seg *segment, n int64) {
	need := seg.size + n
	if need <= seg.alloc || l.memory || l.durability() == DurabilityNone || l.noAlloc {
		return
	}
	a, ok := seg.f.(vfs.Allocator)
	if !ok {
		l.noAlloc = true
		return
	}
	target := need + min(max(seg.size, minAllocStep), maxAllocStep)
	target = min(target, max(need, l.opts.SegmentSize)) // past the roll it would be trimmed again
	if err := a.Allocate(target); err != nil {
		if errors.Is(err, errors.ErrUnsupported) {
			l.noAlloc = true
		}
		return
	}
	seg.alloc = target
}

// trimAllocation cuts the reserved space off seg and syncs the new size,
// so that its file holds exactly its records: before it is sealed and at
// a clean close, whose index and catalog snapshot describe it by size.
func (l *Log) trimAllocation(seg *segment) error {
	if seg.alloc <= seg.size {
		return nil
	}
	if err := seg.f.Truncate(seg.size); err != nil {
		return fmt.Errorf("jetlog: trim %s to %d: %w", seg.name, seg.size, err)
	}
	seg.alloc = 0
	if err := seg.f.Sync(); err != nil {
		return fmt.Errorf("jetlog: sync %s: %w", seg.name, err)
	}
	return nil
}

// reservedTail reports whether the bytes after a segment's last whole
// record are reserved space: zeros, as preallocate leaves them. A torn
// write leaves at least its record's frame behind, which is not zero.
func reservedTail(tail []byte) bool {
	return len(tail) > 0 && len(bytes.TrimRight(tail, "\x00")) == 0
}
