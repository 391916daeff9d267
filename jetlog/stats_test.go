package jetlog

import (
	"testing"
)

func TestHistogramBuckets(t *testing.T) {
	t.Parallel()
	h := NewHistogram([]uint64{10, 100})
	for _, v := range []uint64{0, 10, 11, 100, 101, 5000} {
		h.Observe(v)
	}
	s := h.Snapshot()
	want := []uint64{2, 2, 2}
	for i := range want {
		if s.Counts[i] != want[i] {
			t.Fatalf("counts %v, want %v", s.Counts, want)
		}
	}
	if s.Count != 6 || s.Sum != 5222 {
		t.Fatalf("count %d sum %d, want 6 and 5222", s.Count, s.Sum)
	}
	s.AddTo(h)
	if s.Count != 12 || s.Counts[0] != 4 {
		t.Fatalf("after AddTo: %+v", s)
	}
}

func TestHistogramObserveAllocatesNothing(t *testing.T) {
	h := NewHistogram(latencyBounds)
	if n := testing.AllocsPerRun(100, func() { h.Observe(3e6) }); n != 0 {
		t.Fatalf("Observe allocates %.1f times", n)
	}
}

// Every fsync and every group commit lands in the I/O histograms, and
// DiskBytes follows the segment files across a roll and a reopen.
func TestIOStatsCountSyncsCommitsAndDiskBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, StreamConfig{Name: "S", Durability: DurabilityAlways}, Options{SegmentSize: 1024})
	for range 40 {
		mustAppend(t, l, "a", "0123456789012345678901234567890123456789")
	}
	st := l.Stats()
	io := l.IOStats()
	if got := io.SyncLatency.Snapshot().Count; got != st.Fsyncs {
		t.Fatalf("sync latency count %d, fsyncs %d", got, st.Fsyncs)
	}
	commits := io.CommitSizes.Snapshot()
	if commits.Count != st.Commits || commits.Sum != 40 {
		t.Fatalf("commit sizes count %d sum %d; commits %d, 40 messages", commits.Count, commits.Sum, st.Commits)
	}
	disk := l.DiskBytes()
	if state := l.State(); disk < int64(state.Bytes) || state.Bytes == 0 {
		t.Fatalf("disk bytes %d below the live bytes %d", disk, state.Bytes)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, dir, StreamConfig{Name: "S", Durability: DurabilityAlways}, Options{SegmentSize: 1024})
	if got := l2.DiskBytes(); got < disk {
		t.Fatalf("after reopen disk bytes %d, before %d", got, disk)
	}
}

func TestOldestMatchingReadsTheCatalog(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		clock := newFakeClock()
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{Now: clock.Now})
		first := clock.Now()
		mustAppend(t, l, "a", "1")
		clock.Advance(1e9)
		mustAppend(t, l, "b", "2")
		if err := l.Delete(1); err != nil {
			t.Fatal(err)
		}
		seq, at, ok := l.OldestMatching(1, nil)
		if !ok || seq != 2 || !at.Equal(first.Add(1e9)) {
			t.Fatalf("OldestMatching(1) = %d %v %v", seq, at, ok)
		}
		if _, _, ok := l.OldestMatching(1, []string{"a"}); ok {
			t.Fatal("found a deleted message")
		}
		if _, _, ok := l.OldestMatching(3, nil); ok {
			t.Fatal("found a message past the last")
		}
	})
}
