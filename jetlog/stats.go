package jetlog

import (
	"sync/atomic"
	"time"
)

// Histogram counts observations into fixed buckets. Observe takes no
// lock and allocates nothing (a few atomic adds), so it may sit on the
// write path; Snapshot may run at any time beside it. Make one with
// NewHistogram; the zero value has no buckets and counts only totals.
type Histogram struct {
	bounds []uint64        // inclusive upper bounds, ascending; immutable
	counts []atomic.Uint64 // per bucket, plus one past the last bound
	sum    atomic.Uint64
	count  atomic.Uint64
}

// NewHistogram returns a histogram over the given inclusive upper
// bounds, which must ascend; it keeps bounds, which the caller must not
// change afterwards.
func NewHistogram(bounds []uint64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts v.
func (h *Histogram) Observe(v uint64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	if len(h.counts) > 0 {
		h.counts[i].Add(1)
	}
	h.sum.Add(v)
	h.count.Add(1)
}

// HistogramSnapshot is a histogram's state at one moment. Counts[i] is
// how many observations were at most Bounds[i] and above Bounds[i-1]
// (not cumulative); the last entry of Counts, one past Bounds, counts
// those above every bound. The snapshot is not atomic across buckets:
// Count may run a few observations ahead of the buckets' total.
type HistogramSnapshot struct {
	Bounds []uint64 // shared with the histogram: read-only
	Counts []uint64
	Sum    uint64
	Count  uint64
}

// Snapshot reads the histogram.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Bounds: h.bounds, Counts: make([]uint64, len(h.counts))}
	s.AddTo(h)
	return s
}

// AddTo adds h's current counts to s, which must have h's bounds (or be
// a Snapshot of a histogram with them): the way several logs' histograms
// are summed into one without a snapshot each.
func (s *HistogramSnapshot) AddTo(h *Histogram) {
	if len(s.Counts) != len(h.counts) {
		return
	}
	s.Count += h.count.Load()
	s.Sum += h.sum.Load()
	for i := range h.counts {
		s.Counts[i] += h.counts[i].Load()
	}
}

// latencyBounds are the buckets of the I/O latency histograms, in
// nanoseconds: 50µs to 5s. Never changed (snapshots share it).
var latencyBounds = []uint64{
	50e3, 100e3, 250e3, 500e3,
	1e6, 2.5e6, 5e6, 10e6, 25e6, 50e6, 100e6, 250e6, 500e6,
	1e9, 2.5e9, 5e9,
}

// commitBounds are the buckets of CommitSizes, in messages: powers of
// two up to maxBatch. Never changed.
var commitBounds = []uint64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, maxBatch}

// IOStats are the log's I/O histograms, for monitoring. They live as long
// as the Log; their counts only grow.
type IOStats struct {
	// SyncLatency is how long each fdatasync of the active segment took,
	// in nanoseconds.
	SyncLatency *Histogram
	// CommitSizes is how many messages each group commit wrote.
	CommitSizes *Histogram
}

// newIOStats makes the histograms of a new log.
func newIOStats() IOStats {
	return IOStats{SyncLatency: NewHistogram(latencyBounds), CommitSizes: NewHistogram(commitBounds)}
}

// IOStats returns the log's I/O histograms (shared, safe to read at any
// time).
func (l *Log) IOStats() IOStats { return l.io }

// observeSync records one fdatasync that started at start; the appender
// calls it.
func (l *Log) observeSync(start time.Time) {
	l.io.SyncLatency.Observe(uint64(time.Since(start)))
}

// noteActiveSize publishes the active segment's size for DiskBytes; the
// appender calls it after every write (and once as it starts).
func (l *Log) noteActiveSize() {
	seg := l.active()
	l.activeSize.Store(seg.size)
	l.activeSeg.Store(seg.id)
}

// DiskBytes returns the bytes of the stream's segment files: every
// record written and not yet removed with its segment, deleted messages
// included (index, journal and metadata files are not counted). For a
// memory stream it is the bytes its segments hold in memory.
func (l *Log) DiskBytes() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	segs := l.cat.segs
	if len(segs) == 0 {
		return 0
	}
	var n int64
	// Sealed segments no longer change; the active one's size belongs
	// to the appender, which publishes it after each write.
	for _, seg := range segs[:len(segs)-1] {
		n += seg.size
	}
	if l.activeSeg.Load() == segs[len(segs)-1].id {
		n += l.activeSize.Load()
	}
	return n
}

// OldestMatching returns the first live seq at or after from whose
// subject matches any of filters (none: every subject) and its store
// time, from the catalog alone (no record is read): with from just past a
// consumer's ack floor, the oldest message it has not processed. ok is
// false when there is none. The cost is that of Next without the
// read.
func (l *Log) OldestMatching(from uint64, filters []string) (seq uint64, stored time.Time, ok bool) {
	var buf [4]matcher
	fs := newFilterSet(filters, buf[:0])
	l.prefetch(from)
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return 0, time.Time{}, false
	}
	seq, ok = l.nextLocked(from, fs)
	if !ok {
		return 0, time.Time{}, false
	}
	m, live := l.cat.meta(seq)
	if !live {
		return 0, time.Time{}, false
	}
	return seq, time.Unix(0, m.ts), true
}
