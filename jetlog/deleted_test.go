package jetlog

import (
	"slices"
	"testing"
)

func TestDeletedListsTheHoles(t *testing.T) {
	l := openLog(t, t.TempDir(), StreamConfig{Name: "D"}, Options{SegmentSize: 256})
	for range 20 {
		mustAppend(t, l, "a", "0123456789")
	}
	for _, seq := range []uint64{1, 4, 5, 11, 20} {
		if err := l.Delete(seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.SkipTo(25); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "a", "x")
	want := []uint64{4, 5, 11, 20, 21, 22, 23, 24}
	if got := l.Deleted(100); !slices.Equal(got, want) {
		t.Fatalf("Deleted = %v, want %v", got, want)
	}
	if got := l.Deleted(3); !slices.Equal(got, want[:3]) {
		t.Fatalf("Deleted(3) = %v", got)
	}
	if n := l.State().NumDeleted; n != uint64(len(want)) {
		t.Fatalf("NumDeleted %d, want %d", n, len(want))
	}
}
