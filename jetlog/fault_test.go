package jetlog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	var full atomic.Bool
	fsys.SetFault(func(op, name string) error {
		if full.Load() && strings.HasPrefix(name, "/a/") && (op == "write" || op == "create") {
			return syscall.ENOSPC
		}
		return nil
	})
	a := openLog(t, "/a", StreamConfig{Name: "A"}, Options{FS: fsys, SegmentSize: 300})
	b := openLog(t, "/b", StreamConfig{Name: "B"}, Options{FS: fsys, SegmentSize: 300})
	for i := range 10 {
		mustAppend(t, a, fmt.Sprintf("rec.%d", i), fmt.Sprintf("payload-%d", i))
	}
	before := a.State()
	full.Store(true)
	for range 5 {
		_, err := a.Append(Msg{Subject: "rec.x", Data: []byte("does not fit")}, Expect{})
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("append on full disk err = %v, want ENOSPC", err)
		}
	}
	if err := a.Delete(3); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("delete on full disk err = %v", err)
	}
	if got := a.State(); got != before {
		t.Fatalf("state changed by failed appends: %+v, want %+v", got, before)
	}
	checkIntact(t, a, seqRange(1, 10))
	mustAppend(t, b, "other", "stream still works")
	full.Store(false)
	if seq := mustAppend(t, a, "rec.10", "payload-10"); seq != 11 {
		t.Fatalf("seq after disk freed = %d, want 11", seq)
	}
	// What is on disk is a clean sequence of records.
	crashed := fsys.CrashClone(nil)
	l := openLog(t, "/a", StreamConfig{Name: "A"}, Options{FS: crashed, SegmentSize: 300})
	if rep := l.Recovery(); len(rep.Corrupt) != 0 || rep.TruncatedBytes != 0 {
		t.Fatalf("recovery after ENOSPC: %+v", rep)
	}
	checkIntact(t, l, seqRange(1, 11))
}

func TestFaultFailedFsyncFencesStream(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	var fail atomic.Bool
	fsys.SetFault(func(op, name string) error {
		if fail.Load() && op == "sync" {
			return syscall.EIO
		}
		return nil
	})
	l := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	mustAppend(t, l, "rec.0", "payload-0")
	fail.Store(true)
	if _, err := l.Append(Msg{Subject: "rec.1"}, Expect{}); !errors.Is(err, ErrWriteFenced) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append with failing fsync err = %v", err)
	}
	fail.Store(false) // a retried fsync proves nothing: still fenced
	if _, err := l.Append(Msg{Subject: "rec.1"}, Expect{}); !errors.Is(err, ErrWriteFenced) {
		t.Fatalf("append after fence err = %v", err)
	}
	if err := l.Delete(1); !errors.Is(err, ErrWriteFenced) {
		t.Fatalf("delete after fence err = %v", err)
	}
	if !errors.Is(l.Err(), ErrWriteFenced) {
		t.Fatalf("Err() = %v", l.Err())
	}
	checkIntact(t, l, []uint64{1})
}

func TestGroupCommit(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), StreamConfig{Name: "S"}, Options{})
	const writers, each = 64, 30
	var mu sync.Mutex
	seen := map[uint64]int{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				ack, err := l.Append(Msg{Subject: "g", Data: []byte(fmt.Sprintf("%d-%d", w, i))}, Expect{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[ack.Seq]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != writers*each {
		t.Fatalf("%d distinct seqs, want %d", len(seen), writers*each)
	}
	for seq, n := range seen {
		if n != 1 || seq < 1 || seq > writers*each {
			t.Fatalf("seq %d acked %d times", seq, n)
		}
	}
	st := l.Stats()
	if st.Appends != writers*each || st.Fsyncs >= st.Appends {
		t.Fatalf("stats = %+v: want fewer fsyncs than appends", st)
	}
	t.Logf("appends %d, commits %d, fsyncs %d", st.Appends, st.Commits, st.Fsyncs)
}
