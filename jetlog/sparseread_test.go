package jetlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Next, NextBatch and NumPending with literal filters agree with a brute
// force scan of a model over random streams of many rare subjects (so the
// sparse path, which reads entries from an unloaded section's index, is
// taken, with one filter and several), with deletes, purges, restarts and evictions between queries.
func TestSparseNextAgreesWithScan(t *testing.T) {
	t.Parallel()
	for round := range 4 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(round), 30))
			dir := t.TempDir()
			opts := Options{SegmentSize: 2 << 10}
			l := openLog(t, dir, StreamConfig{}, opts)
			model := map[uint64]string{} // live seq -> subject
			var last, sparse uint64
			subject := func() string {
				if rng.IntN(4) == 0 {
					return fmt.Sprintf("common.%d", rng.IntN(3))
				}
				return fmt.Sprintf("rare.%d", rng.IntN(400))
			}
			for step := range 60 {
				for range 1 + rng.IntN(40) {
					s := subject()
					last = mustAppend(t, l, s, "x")
					model[last] = s
				}
				switch rng.IntN(6) {
				case 0: // delete a few
					for range 1 + rng.IntN(5) {
						seq := 1 + rng.Uint64N(last)
						if err := l.Delete(seq); err != nil && !errors.Is(err, ErrNotFound) {
							t.Fatal(err)
						}
						delete(model, seq)
					}
				case 1: // purge one subject or below a seq
					if rng.IntN(2) == 0 {
						s := subject()
						if _, err := l.Purge(PurgeOptions{Subject: s}); err != nil {
							t.Fatal(err)
						}
						for seq, got := range model {
							if got == s {
								delete(model, seq)
							}
						}
					} else {
						below := 1 + rng.Uint64N(last)
						if _, err := l.Purge(PurgeOptions{Seq: below}); err != nil {
							t.Fatal(err)
						}
						for seq := range model {
							if seq < below {
								delete(model, seq)
							}
						}
					}
				case 2, 3: // restart cleanly, so sealed sections start unloaded
					if err := l.Close(); err != nil {
						t.Fatal(err)
					}
					l = openLog(t, dir, StreamConfig{}, opts)
				}
				if step%3 == 0 {
					evictAll(t, l)
				}
				for range 30 {
					checkSparseQuery(t, rng, l, model, last, subject)
				}
				sparse += l.Stats().SparseReads
			}
			if sparse == 0 {
				t.Fatal("no read took the sparse path")
			}
		})
	}
}

func checkSparseQuery(t *testing.T, rng *rand.Rand, l *Log, model map[uint64]string, last uint64, subject func() string) {
	t.Helper()
	filters := make([]string, 1+rng.IntN(6))
	for i := range filters {
		filters[i] = subject()
	}
	from := uint64(1)
	if rng.IntN(2) == 0 {
		from = 1 + rng.Uint64N(last+1)
	}
	var want []uint64
	for seq, s := range model {
		if seq >= from && slices.Contains(filters, s) {
			want = append(want, seq)
		}
	}
	slices.Sort(want)
	m, err := l.Next(from, filters...)
	switch {
	case len(want) == 0 && !errors.Is(err, ErrNotFound):
		t.Fatalf("Next(%d, %q) = %d, %v; want not found", from, filters, m.Seq, err)
	case len(want) > 0 && (err != nil || m.Seq != want[0] || m.Subject != model[want[0]]):
		t.Fatalf("Next(%d, %q) = %d %q, %v; want %d", from, filters, m.Seq, m.Subject, err, want[0])
	}
	batch, err := l.NextBatch(from, filters, 1+rng.IntN(16))
	switch {
	case len(want) == 0 && !errors.Is(err, ErrNotFound):
		t.Fatalf("NextBatch(%d, %q) = %d msgs, %v; want not found", from, filters, len(batch), err)
	case len(want) > 0:
		if err != nil || len(batch) == 0 {
			t.Fatalf("NextBatch(%d, %q): %v", from, filters, err)
		}
		for i, got := range batch {
			if i >= len(want) || got.Seq != want[i] || got.Subject != model[want[i]] {
				t.Fatalf("NextBatch(%d, %q)[%d] = %d %q; want %v", from, filters, i, got.Seq, got.Subject, want)
			}
		}
	}
	if got := l.NumPending(from, filters...); got != uint64(len(want)) {
		t.Fatalf("NumPending(%d, %q) = %d; want %d", from, filters, got, len(want))
	}
}

// BenchmarkSparseNext reads the message of one subject among about 20,000
// distinct ones in a sealed, unloaded segment: the index is read, the
// section is not built (compare BenchmarkSectionLoad distinct_subjects).
func BenchmarkSparseNext(b *testing.B) {
	dir := b.TempDir()
	opts := Options{SegmentSize: 1 << 20} // the first segment, sealed, holds about 20,000
	l, err := Open(dir, StreamConfig{}, opts)
	if err != nil {
		b.Fatal(err)
	}
	const n = 50000
	for i := range n {
		if _, err := l.Append(Msg{Subject: fmt.Sprintf("subj.%d", i), Data: []byte("x")}, Expect{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	if l, err = Open(dir, StreamConfig{}, opts); err != nil {
		b.Fatal(err)
	}
	defer l.Close() //nolint:errcheck // benchmark
	b.ReportAllocs()
	for b.Loop() {
		if m, err := l.Next(1, "subj.10000"); err != nil || m.Seq != 10001 {
			b.Fatal(m.Seq, err)
		}
	}
}
