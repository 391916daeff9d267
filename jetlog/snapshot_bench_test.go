package jetlog

import (
	"fmt"
	"testing"
)

// BenchmarkCatalogSnapshot is the summary Close writes for a stream of
// 200,000 distinct subjects whose sections are loaded (written since the
// last open): one pass over each section's subjects, and the encoding.
//
//	go test ./jetlog -run '^$' -bench CatalogSnapshot
func BenchmarkCatalogSnapshot(b *testing.B) {
	const n = 200_000
	l := benchLogOf(b, n, func(i int) string { return fmt.Sprintf("subj.%d", i) })
	b.Run("summarise", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.mu.Lock()
			snap := l.cat.snapshot()
			l.mu.Unlock()
			if len(snap.Subjects.Names) != n {
				b.Fatalf("%d subjects, want %d", len(snap.Subjects.Names), n)
			}
		}
	})
	l.mu.Lock()
	snap := l.cat.snapshot()
	l.mu.Unlock()
	b.Run("write", func(b *testing.B) {
		dir := b.TempDir()
		b.ReportAllocs()
		for b.Loop() {
			if err := writeCheckedSized(l.fs, nil, dir+"/"+catalogFile, &snap, snap.encodedSize()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
