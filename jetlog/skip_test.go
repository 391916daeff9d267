package jetlog

import (
	"slices"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// TestSkipToLeavesAGapThatSurvivesRecovery: the next append gets the
// skipped-to seq, nothing is removed, and a reopened log (clean or after
// losing its catalog snapshot) has the same seqs and reports no loss.
func TestSkipToLeavesAGapThatSurvivesRecovery(t *testing.T) {
	for _, crash := range []bool{false, true} {
		fsys := vfs.NewMemFS()
		dir := "/m"
		cfg := StreamConfig{Name: "M"}
		l, err := Open(dir, cfg, Options{FS: fsys})
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, "a", "1")
		if err := l.SkipTo(10); err != nil {
			t.Fatal(err)
		}
		if err := l.SkipTo(5); err != nil { // behind: nothing to do
			t.Fatal(err)
		}
		if seq := mustAppend(t, l, "a", "10"); seq != 10 {
			t.Fatalf("after SkipTo(10) the append got seq %d", seq)
		}
		if err := l.SkipTo(100_000); err != nil { // a long gap: a segment of its own
			t.Fatal(err)
		}
		if seq := mustAppend(t, l, "b", "x"); seq != 100_000 {
			t.Fatalf("after SkipTo(100000) the append got seq %d", seq)
		}
		src := fsys
		if crash {
			src = fsys.CrashClone(nil) // what was synced, without the clean close
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2 := openLog(t, dir, cfg, Options{FS: src})
		if rep := l2.Recovery(); len(rep.Losses) > 0 || len(rep.Lost) > 0 || len(rep.Corrupt) > 0 {
			t.Fatalf("crash=%v: recovery reported losses %+v", crash, rep.Losses)
		}
		if got := liveSeqs(t, l2); !slices.Equal(got, []uint64{1, 10, 100_000}) {
			t.Fatalf("crash=%v: seqs %v after reopen", crash, got)
		}
		if s := l2.State(); s.LastSeq != 100_000 || s.Msgs != 3 {
			t.Fatalf("crash=%v: state %+v", crash, s)
		}
	}
}

// TestNoDedupStoresRepeatedIDs: a mirror's copies keep their ids without
// being dropped as duplicates.
func TestNoDedupStoresRepeatedIDs(t *testing.T) {
	l := openLog(t, t.TempDir(), StreamConfig{Name: "M"}, Options{})
	msgs := []Msg{{Subject: "a", Header: hdrWithID("x")}, {Subject: "a", Header: hdrWithID("x")}}
	acks, err := l.AppendBatch(msgs, Expect{NoDedup: true})
	if err != nil || len(acks) != 2 || acks[1].Duplicate || acks[1].Seq != 2 {
		t.Fatalf("acks %+v err %v", acks, err)
	}
}
