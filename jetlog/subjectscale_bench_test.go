package jetlog

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// BenchmarkManySubjectsRead reads a stream of 1,000,000 messages of 64 B,
// each on its own subject subj.<i> (docs/scaling.md, issue #30), the way a
// consumer does (NextBatch from where the last batch ended), right after a
// clean restart, so every sealed section is unloaded: the first message
// and the whole catch-up for one literal filter, 100 literals spread over
// the stream, a wildcard over every subject and no filter. Each iteration
// reopens the log (not timed). section-loads counts the sections read
// whole, sparse-reads the batches read from an index file alone. Run with -benchtime=1x: building the log
// takes a few seconds.
func BenchmarkManySubjectsRead(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	opts := Options{}
	l, err := Open(dir, StreamConfig{Name: "S", Durability: DurabilityNone}, opts)
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]Msg, 1000)
	data := make([]byte, 64)
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = Msg{Subject: fmt.Sprintf("subj.%d", i+j), Data: data}
		}
		if _, err := l.AppendBatch(batch, Expect{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = fmt.Sprintf("subj.%d", i*(n/len(hundred)))
	}
	for _, bc := range []struct {
		name    string
		filters []string
		want    int
	}{
		{"filters=1", []string{fmt.Sprintf("subj.%d", n/2)}, 1},
		{"filters=100", hundred, len(hundred)},
		{"filters=wildcard", []string{"subj.>"}, n},
		{"filters=none", nil, n},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var first, all, reopen time.Duration
			var loads, sparse, blocks uint64
			for b.Loop() {
				b.StopTimer()
				start := time.Now()
				l, err := Open(dir, StreamConfig{Name: "S", Durability: DurabilityNone}, opts)
				if err != nil {
					b.Fatal(err)
				}
				reopen += time.Since(start)
				b.StartTimer()
				start = time.Now()
				got, from := 0, uint64(1)
				for {
					msgs, err := l.NextBatch(from, bc.filters, 256)
					if errors.Is(err, ErrNotFound) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if got == 0 {
						first += time.Since(start)
					}
					got += len(msgs)
					from = msgs[len(msgs)-1].Seq + 1
				}
				all += time.Since(start)
				if got != bc.want {
					b.Fatalf("read %d messages, want %d", got, bc.want)
				}
				b.StopTimer()
				loads += l.index.Stats().Loads
				sparse += l.Stats().SparseReads
				blocks += l.Stats().BlockReads
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			k := float64(b.N)
			b.ReportMetric(float64(first.Microseconds())/k/1000, "first-ms")
			b.ReportMetric(float64(all.Microseconds())/k/1000, "all-ms")
			b.ReportMetric(float64(reopen.Microseconds())/k/1000, "open-ms")
			b.ReportMetric(float64(loads)/k, "section-loads")
			b.ReportMetric(float64(sparse)/k, "sparse-reads")
			b.ReportMetric(float64(blocks)/k, "block-reads")
		})
	}
}
