package jetlog

import (
	"fmt"
	"testing"
	"time"
)

// fillSegments appends n small messages, in batches, to l.
func fillSegments(t *testing.T, l *Log, n int) {
	t.Helper()
	batch := make([]Msg, 100)
	for i := range batch {
		batch[i] = Msg{Subject: fmt.Sprintf("idx.%d", i%3), Data: []byte("0123456789abcdef")}
	}
	for i := 0; i < n; i += len(batch) {
		if _, err := l.AppendBatch(batch, Expect{}); err != nil {
			t.Fatal(err)
		}
	}
}

// largestSection is the most any one sealed section of l counts.
func largestSection(l *Log) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, seg := range l.cat.segs {
		n = max(n, int64(seg.slots())*40+64*3)
	}
	return n
}

func TestIndexCache(t *testing.T) {
	t.Parallel()
	const msgs = 20_000
	small := Options{SegmentSize: 32 << 10, EvictAfter: -1}

	t.Run("sealed_sections_beyond_the_bound_are_dropped_as_they_seal", func(t *testing.T) {
		t.Parallel()
		cache := NewIndexCache(IndexCacheOptions{MaxBytes: 64 << 10})
		opts := small
		opts.IndexCache = cache
		l := openLog(t, t.TempDir(), StreamConfig{Name: "I", Durability: DurabilityNone}, opts)
		fillSegments(t, l, msgs)
		st := cache.Stats()
		if limit := st.MaxBytes + largestSection(l); st.Bytes > limit || st.Bytes <= 0 {
			t.Fatalf("index cache holds %d bytes after appends, want (0, %d]", st.Bytes, limit)
		}
		if st.Evicted == 0 {
			t.Fatal("no section evicted")
		}
	})

	t.Run("reads_load_what_they_use_and_the_bound_holds", func(t *testing.T) {
		t.Parallel()
		cache := NewIndexCache(IndexCacheOptions{MaxBytes: 64 << 10})
		opts := small
		opts.IndexCache = cache
		dir := t.TempDir()
		l := openLog(t, dir, StreamConfig{Name: "I", Durability: DurabilityNone}, opts)
		fillSegments(t, l, msgs)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if b := cache.Stats().Bytes; b != 0 {
			t.Fatalf("a closed log still counts %d bytes", b)
		}
		l = openLog(t, dir, StreamConfig{Name: "I", Durability: DurabilityNone}, opts)
		if b := cache.Stats().Bytes; b != 0 {
			t.Fatalf("a clean restart counts %d bytes before any read", b)
		}
		limit := cache.Stats().MaxBytes + 2*largestSection(l)
		peak := int64(0)
		for seq := uint64(1); seq <= msgs; seq++ {
			if m := mustGet(t, l, seq); m.Seq != seq {
				t.Fatalf("Get(%d) = seq %d", seq, m.Seq)
			}
			peak = max(peak, cache.Stats().Bytes)
		}
		// The appender drops what is over the bound just after each load.
		eventually(t, 5*time.Second, func() bool { return cache.Stats().Bytes <= limit })
		st := cache.Stats()
		if st.Loads < 2 || st.Evicted == 0 {
			t.Fatalf("stats %+v: want loads and evictions", st)
		}
		t.Logf("peak %d bytes, bound %d, stats %+v", peak, st.MaxBytes, st)
	})

	t.Run("idle_sections_are_dropped_and_memory_handed_back", func(t *testing.T) {
		t.Parallel()
		cache := NewIndexCache(IndexCacheOptions{MaxBytes: 1 << 30})
		t.Cleanup(func() {
			if err := cache.Close(); err != nil {
				t.Error(err)
			}
		})
		opts := Options{SegmentSize: 256 << 10, EvictAfter: 20 * time.Millisecond, ExpireEvery: 10 * time.Millisecond, IndexCache: cache}
		dir := t.TempDir()
		l := openLog(t, dir, StreamConfig{Name: "I", Durability: DurabilityNone}, opts)
		fillSegments(t, l, 40_000) // well over releaseMin of sections
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openLog(t, dir, StreamConfig{Name: "I", Durability: DurabilityNone}, opts)
		for seq := uint64(1); seq <= 40_000; seq += 100 {
			mustGet(t, l, seq)
		}
		eventually(t, 10*time.Second, func() bool {
			st := cache.Stats()
			return st.Bytes == 0 && st.Releases > 0
		})
	})
}

// BenchmarkSectionLoad measures loading a sealed segment's section from
// its index (what the first read of a cold segment costs) and reports the
// bytes the index cache counts per message.
func BenchmarkSectionLoad(b *testing.B) {
	b.Run("one_subject", func(b *testing.B) { benchSectionLoad(b, func(int) string { return "load.x" }) })
	// Every message on its own subject, as in a stream of a million
	// subjects (docs/scaling.md): a per-subject list for every slot.
	b.Run("distinct_subjects", func(b *testing.B) { benchSectionLoad(b, func(i int) string { return fmt.Sprintf("load.%d", i) }) })
}

func benchSectionLoad(b *testing.B, subject func(i int) string) {
	cache := NewIndexCache(IndexCacheOptions{})
	l, err := Open(b.TempDir(), StreamConfig{Name: "L", Durability: DurabilityNone}, Options{SegmentSize: 4 << 20, EvictAfter: -1, IndexCache: cache})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	batch := make([]Msg, 100)
	for n := 0; l.State().Msgs < 100_000; n += len(batch) {
		for i := range batch {
			batch[i] = Msg{Subject: subject(n + i), Data: make([]byte, 64)}
		}
		if _, err := l.AppendBatch(batch, Expect{}); err != nil {
			b.Fatal(err)
		}
	}
	seg := l.cat.segs[0]
	evictAll(b, l)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		l.cat.load(seg)
		b.StopTimer()
		evictAll(b, l)
		b.StartTimer()
	}
	b.StopTimer()
	l.cat.load(seg)
	b.ReportMetric(float64(sectionBytes(&seg.section))/float64(seg.slots()), "index-B/msg")
}
