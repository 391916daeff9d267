package jetlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// NextBatch returns what calling Next again and again would:
// the same messages in the same order, across segments, around deleted
// messages, with and without filters.
func TestNextBatchMatchesNext(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: k.storage}, Options{SegmentSize: 4 << 10})
		rng := rand.New(rand.NewPCG(11, 12))
		for i := range 600 {
			mustAppend(t, l, fmt.Sprintf("b.%d", i%3), fmt.Sprintf("payload %d %s", i, make([]byte, rng.IntN(200))))
		}
		for seq := uint64(1); seq <= 600; seq += 7 {
			if err := l.Delete(seq); err != nil {
				t.Fatal(err)
			}
		}
		for _, filters := range [][]string{nil, {"b.1"}, {"b.0", "b.2"}, {"b.*"}} {
			for _, max := range []int{1, 5, 64, 1000} {
				var got, want []uint64
				for from := uint64(1); ; {
					batch, err := l.NextBatch(from, filters, max)
					if errors.Is(err, ErrNotFound) {
						break
					}
					if err != nil || len(batch) == 0 || len(batch) > max {
						t.Fatalf("NextBatch(%d, %q, %d): %d messages, %v", from, filters, max, len(batch), err)
					}
					for _, m := range batch {
						got = append(got, m.Seq)
						if want := mustGet(t, l, m.Seq); string(want.Data) != string(m.Data) || want.Subject != m.Subject {
							t.Fatalf("seq %d: batch read %q on %s, Get %q on %s", m.Seq, m.Data, m.Subject, want.Data, want.Subject)
						}
					}
					from = batch[len(batch)-1].Seq + 1
				}
				for from := uint64(1); ; {
					m, err := l.Next(from, filters...)
					if err != nil {
						break
					}
					want = append(want, m.Seq)
					from = m.Seq + 1
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("filters %q, max %d: batches gave %v\nNext gave %v", filters, max, got, want)
				}
			}
		}
	})
}

// see NextBatch
func BenchmarkReadBatch(b *testing.B) {
	l, err := Open(b.TempDir(), StreamConfig{Name: "B", Subjects: []string{"b"}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const n = 10000
	msgs := make([]Msg, n)
	for i := range msgs {
		msgs[i] = Msg{Subject: "b", Data: make([]byte, 128)}
	}
	if _, err := l.AppendBatch(msgs, Expect{}); err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{1, 64} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			b.ReportAllocs()
			from := uint64(1)
			for b.Loop() {
				batch, err := l.NextBatch(from, nil, size)
				if err != nil {
					b.Fatal(err)
				}
				from = batch[len(batch)-1].Seq + 1
				if from > n {
					from = 1
				}
			}
		})
	}
}
