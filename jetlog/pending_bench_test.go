package jetlog

import (
	"strconv"
	"testing"
)

// BenchmarkNumPendingWildcard counts what a consumer filtered to subj.>
// has left as it catches up over a stream of one message per subject
// (issue #30): each call asks from 1,000 seqs further on, as a pull of
// 1,000 does.
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
		})
	}
}
