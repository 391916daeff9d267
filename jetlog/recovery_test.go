package jetlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// buildMemLog appends n messages to a fresh log on a MemFS in always mode
// and returns the FS as a crash would leave it (no clean marker, no index
// of the active segment), plus each record's offset and end.
func buildMemLog(t *testing.T, n int) (*vfs.MemFS, []int64, int64) {
	t.Helper()
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	var end int64
	for i := range n {
		offs = append(offs, end)
		subj := fmt.Sprintf("rec.%d", i)
		data := []byte(fmt.Sprintf("payload-%d", i))
		if _, err := l.Append(Msg{Subject: subj, Data: data}, Expect{}); err != nil {
			t.Fatal(err)
		}
		end += int64(recordSize(subj, nil, data))
	}
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return crashed, offs, end
}

func truncateFile(t *testing.T, fsys FS, name string, size int64) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func flipBit(t *testing.T, fsys FS, name string, off int64, bit uint) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1 << bit
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

var firstSeg = path.Join("/s", segName(1))

// checkIntact verifies that every seq in want is readable with the data
// buildMemLog wrote.
func checkIntact(t *testing.T, l *Log, seqs []uint64) {
	t.Helper()
	for _, seq := range seqs {
		m, err := l.Get(seq)
		if err != nil {
			t.Fatalf("Get(%d): %v", seq, err)
		}
		if m.Subject != fmt.Sprintf("rec.%d", seq-1) || string(m.Data) != fmt.Sprintf("payload-%d", seq-1) {
			t.Fatalf("Get(%d) = %q %q", seq, m.Subject, m.Data)
		}
	}
}

func seqRange(first, last uint64) []uint64 {
	var out []uint64
	for s := first; s <= last; s++ {
		out = append(out, s)
	}
	return out
}

func TestRecoveryTornTailEveryOffset(t *testing.T) {
	t.Parallel()
	const n = 12
	base, offs, end := buildMemLog(t, n)
	for cut := offs[n-3]; cut < end; cut++ {
		fsys := base.CrashClone(nil)
		truncateFile(t, fsys, firstSeg, cut)
		l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
		if err != nil {
			t.Fatalf("cut %d: Open: %v", cut, err)
		}
		complete := 0
		for complete < n && (complete+1 == n && end <= cut || complete+1 < n && offs[complete+1] <= cut) {
			complete++
		}
		rep := l.Recovery()
		wantDropped := cut - func() int64 {
			if complete == n {
				return end
			}
			return offs[complete]
		}()
		if len(rep.Corrupt) != 0 || rep.TruncatedBytes != wantDropped {
			t.Fatalf("cut %d: report %+v, want %d bytes dropped", cut, rep, wantDropped)
		}
		if st := l.State(); st.LastSeq != uint64(complete) || st.Msgs != uint64(complete) {
			t.Fatalf("cut %d: state %+v, want %d msgs", cut, st, complete)
		}
		checkIntact(t, l, seqRange(1, uint64(complete)))
		ack, err := l.Append(Msg{Subject: "after"}, Expect{})
		if err != nil || ack.Seq != uint64(complete)+1 {
			t.Fatalf("cut %d: append after recovery = %+v, %v", cut, ack, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecoveryMiddleCorruption(t *testing.T) {
	t.Parallel()
	const n = 10
	base, offs, _ := buildMemLog(t, n)
	// Every byte of record 5 (seq 5): header, length, payload.
	for off := offs[4]; off < offs[5]; off++ {
		fsys := base.CrashClone(nil)
		flipBit(t, fsys, firstSeg, off, uint(off%8))
		var logs []string
		l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
		if err != nil {
			t.Fatalf("off %d: %v", off, err)
		}
		rep := l.Recovery()
		if len(rep.Corrupt) != 1 || rep.Corrupt[0].Segment != segName(1) || rep.Corrupt[0].Offset != offs[4] {
			t.Fatalf("off %d: corrupt = %v (%v)", off, rep.Corrupt, logs)
		}
		if !errors.Is(rep.Corrupt[0], ErrCorrupt) {
			t.Fatal("CorruptError does not match ErrCorrupt")
		}
		if len(rep.Lost) != 1 || rep.Lost[0] != (SeqRange{5, 5}) {
			t.Fatalf("off %d: lost = %v", off, rep.Lost)
		}
		checkIntact(t, l, []uint64{1, 2, 3, 4, 6, 7, 8, 9, 10})
		if _, err := l.Get(5); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(5) = %v", err)
		}
		if st := l.State(); st.Msgs != n-1 || st.NumDeleted != 1 || st.LastSeq != n {
			t.Fatalf("state = %+v", st)
		}
		if ack, err := l.Append(Msg{Subject: "after"}, Expect{}); err != nil || ack.Seq != n+1 {
			t.Fatalf("append = %+v, %v", ack, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecoveryRandomBitFlips(t *testing.T) {
	t.Parallel()
	const n = 30
	base, offs, end := buildMemLog(t, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		fsys := base.CrashClone(nil)
		damaged := map[int]bool{}
		for range 1 + rng.IntN(3) {
			off := rng.Int64N(end)
			flipBit(t, fsys, firstSeg, off, uint(rng.IntN(8)))
			for i := range offs {
				if off >= offs[i] && (i == n-1 || off < offs[i+1]) {
					damaged[i] = true
				}
			}
		}
		l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Recovery().Corrupt) == 0 && l.Recovery().TruncatedBytes == 0 {
			t.Fatalf("damage to %v not detected", damaged)
		}
		var intact []uint64
		for i := range n {
			if !damaged[i] {
				intact = append(intact, uint64(i+1))
			}
		}
		// Records after the last damaged one at the tail may be cut as a
		// torn tail only if nothing valid follows; intact ones before a
		// later valid record must all survive.
		for _, seq := range intact {
			if _, err := l.Get(seq); err != nil && seq < l.State().LastSeq {
				t.Fatalf("intact seq %d lost: %v (damaged %v)", seq, err, damaged)
			}
		}
		checkIntact(t, l, func() []uint64 {
			var ok []uint64
			for _, s := range intact {
				if _, err := l.Get(s); err == nil {
					ok = append(ok, s)
				}
			}
			return ok
		}())
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRecoveryRebuildsDamagedIndex(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	opts := Options{FS: fsys, SegmentSize: 100}
	l, err := Open("/s", StreamConfig{Name: "S"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		mustAppend(t, l, fmt.Sprintf("rec.%d", i), fmt.Sprintf("payload-%d", i))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	flipBit(t, fsys, path.Join("/s", idxName(1)), 10, 3)
	if err := fsys.Remove(path.Join("/s", idxName(2))); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, "/s", StreamConfig{Name: "S"}, opts)
	rep := l2.Recovery()
	if len(rep.RebuiltIndexes) != 2 || rep.Scanned != 2 || len(rep.Corrupt) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	checkIntact(t, l2, seqRange(1, 20))
}

func TestRecoveryDamagedConfigIsRewritten(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "a", "x")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	flipBit(t, fsys, path.Join("/s", metaFile), 6, 1)
	if _, _, err := LoadConfig(fsys, "/s"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("LoadConfig of damaged = %v", err)
	}
	l2 := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	if len(l2.Recovery().Problems) != 1 || l2.State().Msgs != 1 {
		t.Fatalf("report = %+v, state %+v", l2.Recovery(), l2.State())
	}
	if cfg, _, err := LoadConfig(fsys, "/s"); err != nil || cfg.Name != "S" {
		t.Fatalf("LoadConfig = %+v, %v", cfg, err)
	}
}

func TestRecoveryCleanOpenVerifiesTail(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	var end int64
	for i := range 10 {
		offs = append(offs, end)
		mustAppend(t, l, fmt.Sprintf("rec.%d", i), fmt.Sprintf("payload-%d", i))
		end += int64(recordSize(fmt.Sprintf("rec.%d", i), nil, []byte(fmt.Sprintf("payload-%d", i))))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Damage the record before the last after a clean shutdown.
	flipBit(t, fsys, firstSeg, offs[8]+20, 0)
	l2 := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	rep := l2.Recovery()
	if !rep.Clean || rep.Scanned != 1 || len(rep.Corrupt) != 1 || rep.Corrupt[0].Offset != offs[8] {
		t.Fatalf("report = %+v", rep)
	}
	checkIntact(t, l2, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 10})
}
