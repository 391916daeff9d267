package jetlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// The dedup window costs the same after a restart as before it, whether
// it comes back from dedup.snap (clean) or is rebuilt from the messages
// (crash): it doubled (344 -> 636 MB for 50k ids of 4 KiB, issue 11).

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// totalAlloc returns the bytes allocated so far.
func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// dedupFigures are the heap figures of dedupHeap, in bytes: what the open
// log holds (after a collection) before a restart, after a clean one
// (from dedup.snap) and after one without the clean marker (rebuilt from
// the messages), and what each Open and the Close before them allocated
// in all, which is what the process's memory grows to while they run.
type dedupFigures struct {
	before, clean, rebuilt               uint64
	closeAlloc, cleanAlloc, rebuiltAlloc uint64
	segBytes                             uint64 // size of the active segment
}

// dedupHeap appends n messages with distinct ids of idSize bytes and
// returns the heap the open log holds before Close, after a clean
// reopen and after a reopen without the clean marker, each above the
// heap measured before the first Open.
func dedupHeap(tb testing.TB, dir string, n, idSize int) dedupFigures {
	tb.Helper()
	cfg := StreamConfig{Name: "D", Durability: DurabilityNone, DuplicateWindow: time.Hour}
	opts := Options{ExpireEvery: -1}
	base := heapInUse()
	l, err := Open(dir, cfg, opts)
	if err != nil {
		tb.Fatal(err)
	}
	pad := strings.Repeat("i", idSize-12)
	msgs := make([]Msg, 0, 256)
	for i := 0; i < n; {
		msgs = msgs[:0]
		for ; i < n && len(msgs) < cap(msgs); i++ {
			msgs = append(msgs, Msg{Subject: "d", Header: hdrWithID(fmt.Sprintf("%s%012d", pad, i))})
		}
		if _, err := l.AppendBatch(msgs, Expect{}); err != nil {
			tb.Fatal(err)
		}
	}
	msgs = nil
	var f dedupFigures
	f.before = heapInUse() - base
	a := totalAlloc()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	f.closeAlloc = totalAlloc() - a
	measure := func() (uint64, uint64) {
		a := totalAlloc()
		l, err := Open(dir, cfg, opts)
		if err != nil {
			tb.Fatal(err)
		}
		alloc := totalAlloc() - a
		h := heapInUse() - base
		if st := l.State(); st.Msgs != uint64(n) {
			tb.Fatalf("reopened with %d msgs, want %d", st.Msgs, n)
		}
		if err := l.Close(); err != nil {
			tb.Fatal(err)
		}
		return h, alloc
	}
	f.clean, f.cleanAlloc = measure()
	if err := os.Remove(filepath.Join(dir, cleanFile)); err != nil {
		tb.Fatal(err)
	}
	f.rebuilt, f.rebuiltAlloc = measure()
	names, err := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	if err != nil || len(names) == 0 {
		tb.Fatalf("segments: %v %v", names, err)
	}
	st, err := os.Stat(names[len(names)-1])
	if err != nil {
		tb.Fatal(err)
	}
	f.segBytes = uint64(st.Size())
	return f
}

func TestDedupWindowMemoryAfterRestart(t *testing.T) {
	// Not parallel: it measures the heap.
	if raceEnabled {
		t.Skip("heap figures under -race are not the program's")
	}
	const n, size = 5000, 4096
	f := dedupHeap(t, t.TempDir(), n, size)
	t.Logf("%+v", f)
	ids := uint64(n * size)
	for name, h := range map[string]uint64{"clean": f.clean, "rebuilt": f.rebuilt} {
		if h > f.before+f.before/4 {
			t.Errorf("%s restart holds %d KiB, before it %d KiB: more than 1.25x", name, h>>10, f.before>>10)
		}
	}
	// Loading or writing the window allocates about the ids once (they
	// are kept), not a copy of the file, a decoded copy and a copy of that.
	// A rebuild also reads the active segment whole to verify it (a crash
	// recovery's cost, bounded by Options.SegmentSize).
	for name, a := range map[string]uint64{"Close": f.closeAlloc, "clean Open": f.cleanAlloc, "rebuilding Open": f.rebuiltAlloc - f.segBytes} {
		if a > ids+ids/2 {
			t.Errorf("%s allocated %d KiB for %d KiB of ids: more than 1.5x", name, a>>10, ids>>10)
		}
	}
}

// BenchmarkDedupRestart reports the heap the dedup window of 50k ids of
// 4 KiB holds before and after a restart:
//
//	go test -run '^$' -bench BenchmarkDedupRestart -benchtime 1x ./jetlog/
func BenchmarkDedupRestart(b *testing.B) {
	for range b.N {
		f := dedupHeap(b, b.TempDir(), 50000, 4096)
		mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
		b.ReportMetric(mib(f.before), "MiB-held-before")
		b.ReportMetric(mib(f.clean), "MiB-held-clean")
		b.ReportMetric(mib(f.rebuilt), "MiB-held-rebuilt")
		b.ReportMetric(mib(f.closeAlloc), "MiB-alloc-close")
		b.ReportMetric(mib(f.cleanAlloc), "MiB-alloc-clean-open")
		b.ReportMetric(mib(f.rebuiltAlloc), "MiB-alloc-rebuilt-open")
	}
}

// dedup.snap keeps its format: what writeChecked wrote (before the
// streaming writer) reads back with the streaming reader, the streaming
// writer writes the same bytes, and damage is a CorruptError.
func TestDedupSnapshotFormatUnchanged(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	snap := dedupSnapshot{IDs: []string{"a", strings.Repeat("b", 5000)}, Seqs: []uint64{1, 7}, TS: []int64{10, 20}}
	if err := writeChecked(fsys, nil, "/old", snap); err != nil {
		t.Fatal(err)
	}
	if err := writeCheckedStream(fsys, nil, "/new", snap); err != nil {
		t.Fatal(err)
	}
	old, _ := readAll(fsys, "/old")
	cur, _ := readAll(fsys, "/new")
	if !bytes.Equal(old, cur) {
		t.Fatalf("streamed file differs:\n%x\n%x", old, cur)
	}
	var got dedupSnapshot
	if err := readCheckedStream(fsys, nil, "/old", &got); err != nil || !reflect.DeepEqual(got, snap) {
		t.Fatalf("read %+v, %v", got, err)
	}
	for _, off := range []int64{0, 3, 10, int64(len(old) - 1)} {
		c := fsys.CrashClone(nil)
		flipBit(t, c, "/old", off, 1)
		if err := readCheckedStream(c, nil, "/old", &dedupSnapshot{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d: %v", off, err)
		}
	}
}
