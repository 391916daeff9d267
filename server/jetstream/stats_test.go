package jetstream

import (
	"testing"
	"time"
)

// The publish counters cost a few atomic adds and one bucket search per
// message, and allocate nothing.
func TestPublishStatsAllocateNothing(t *testing.T) {
	p := newPublishStats()
	start := time.Now()
	if n := testing.AllocsPerRun(100, func() { p.stored(start, false) }); n != 0 {
		t.Fatalf("stored allocates %.1f times", n)
	}
	if s := p.latency.Snapshot(); s.Count != 101 || p.accepted.Load() != 101 {
		t.Fatalf("count %d accepted %d, want 101", s.Count, p.accepted.Load())
	}
}

// BenchmarkPublishStats is what metrics add to each publish: the capture
// time and, at the ack, the counters and the latency bucket.
func BenchmarkPublishStats(b *testing.B) {
	p := newPublishStats()
	b.ReportAllocs()
	for b.Loop() {
		p.stored(time.Now(), false)
	}
}
