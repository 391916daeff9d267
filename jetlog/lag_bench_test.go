package jetlog

import (
	"strconv"
	"testing"
)

// BenchmarkNumPendingWildcard counts what a consumer filtered to subj.>
// has left as it catches up over a stream of one message per subject
// (issue #30): each call asks from 1,000 seqs further on, as a pull of
// 1,000 does: counted afresh by Log.NumPending (way=scan), and kept by a
// Lag (way=lag; its first count, afresh, is left out; each wrap-around
// back to seq 1 walks the stream back).
//
//	go test ./jetlog -run '^$' -bench NumPendingWildcard -benchmem
func BenchmarkNumPendingWildcard(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run("subjects="+strconv.Itoa(n), func(b *testing.B) {
			l := benchLogOf(b, n, func(i int) string { return "subj." + strconv.Itoa(i) })
			b.Run("way=scan", func(b *testing.B) {
				b.ReportAllocs()
				from := uint64(1)
				for b.Loop() {
					if got, want := l.NumPending(from, "subj.>"), uint64(n)+1-from; got != want {
						b.Fatalf("NumPending(%d) = %d, want %d", from, got, want)
					}
					from = 1 + (from+999)%uint64(n)
				}
			})
			b.Run("way=lag", func(b *testing.B) {
				lag := l.TrackLag([]string{"subj.>"})
				defer lag.Close()
				lag.At(1) // the first count, afresh: not what a pull pays
				b.ReportAllocs()
				from := uint64(1)
				for b.Loop() {
					if got, want := lag.At(from), uint64(n)+1-from; got != want {
						b.Fatalf("At(%d) = %d, want %d", from, got, want)
					}
					from = 1 + (from+999)%uint64(n)
				}
			})
		})
	}
}

// BenchmarkAppendWithLags measures what kept lags cost the appender: a
// batch of 100 appends on repeating subjects with no lag, and with 1 and
// 10 lags filtered by a wildcard (each append is matched against each).
//
//	go test ./jetlog -run '^$' -bench AppendWithLags -benchmem
func BenchmarkAppendWithLags(b *testing.B) {
	for _, lags := range []int{0, 1, 10} {
		b.Run("lags="+strconv.Itoa(lags), func(b *testing.B) {
			l, err := Open(b.TempDir(), StreamConfig{Name: "B", Durability: DurabilityNone}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = l.Close() }()
			for i := range lags {
				lag := l.TrackLag([]string{"orders.*." + strconv.Itoa(i)})
				lag.At(1)
				defer lag.Close()
			}
			batch := make([]Msg, 100)
			for j := range batch {
				batch[j] = Msg{Subject: "orders.eu." + strconv.Itoa(j%20), Data: make([]byte, 64)}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.AppendBatch(batch, Expect{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/msg")
		})
	}
}
