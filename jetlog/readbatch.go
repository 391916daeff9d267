package jetlog

import "fmt"

// maxBatchRead bounds the bytes NextBatch reads with one call.
const maxBatchRead = 256 << 10

// NextBatch returns up to max messages with seq >= from whose subject
// matches any of filters (as Next), in seq order. It reads them
// from one segment with a single ReadAt of at most 256 KiB (always at
// least the first message), so a consumer reading in order pays one
// system call per batch instead of one per message. It returns fewer
// than max at the end of the log, at a segment's end or at that bound;
// ErrNotFound when there is none. The messages share one buffer, which
// the caller owns.
// see BenchmarkReadBatch
func (l *Log) NextBatch(from uint64, filters []string, max int) ([]Msg, error) {
	var buf [4]matcher
	fs := newFilterSet(filters, buf[:0])
	if msgs, handled, err := l.sparseBatch(from, fs, max); handled {
		return msgs, err
	}
	l.prefetchFor(from, fs)
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	type span struct {
		off  int64
		size uint32
	}
	var spans [64]span
	picked := spans[:0]
	var seg *segment
	for seq := from; len(picked) < max; seq++ {
		next, ok := l.nextLocked(seq, fs)
		if !ok {
			break
		}
		m, s := l.cat.locate(next)
		if seg == nil {
			seg = s
		}
		if s != seg || len(picked) > 0 && m.off+int64(m.size)-picked[0].off > maxBatchRead {
			break
		}
		picked = append(picked, span{m.off, m.size})
		seq = next
	}
	if len(picked) == 0 {
		l.mu.RUnlock()
		return nil, fmt.Errorf("jetlog: next batch from %d %q: %w", from, filters, ErrNotFound)
	}
	seg.acquire()
	l.mu.RUnlock()
	defer seg.done() //nolint:errcheck // read-only reference
	first, last := picked[0], picked[len(picked)-1]
	raw := make([]byte, last.off+int64(last.size)-first.off)
	if n, err := seg.f.ReadAt(raw, first.off); n != len(raw) {
		if err == nil {
			err = fmt.Errorf("short read")
		}
		return nil, fmt.Errorf("jetlog: read %s at %d: %w", seg.name, first.off, err)
	}
	out := make([]Msg, 0, len(picked))
	for _, p := range picked {
		rec := raw[p.off-first.off : p.off-first.off+int64(p.size)]
		r, reason := l.seal.decode(rec)
		if reason != "" {
			return out, &CorruptError{Segment: seg.name, Offset: p.off, Reason: reason}
		}
		msg, err := recordMsg(seg, p.off, r)
		if err != nil {
			return out, err
		}
		out = append(out, msg)
	}
	return out, nil
}
