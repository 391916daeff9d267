package jetlog

import (
	"errors"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

func openConsumerLog(t *testing.T, fsys *vfs.MemFS, clock *fakeClock) *Log {
	t.Helper()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys, Now: clock.Now, CompactBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestConsumerSurvivesCrash(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	cfg := ConsumerConfig{AckWait: time.Second, MaxAckPending: 3}
	c, err := l.OpenConsumer("D1", cfg)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Deliver(4); !errors.Is(err, ErrMaxAckPending) {
		t.Fatalf("4th pending err = %v", err)
	}
	if _, err := c.Ack(2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Nak(3, 0); err != nil {
		t.Fatal(err)
	}
	want := c.Info()
	crashed := fsys.CrashClone(nil) // acks are synced before they return
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l2 := openConsumerLog(t, crashed, clock)
	defer l2.Close() //nolint:errcheck
	names, err := l2.ConsumerNames()
	if err != nil || !slices.Equal(names, []string{"D1"}) {
		t.Fatalf("names = %v, %v", names, err)
	}
	gotCfg, err := l2.LoadConsumerConfig("D1")
	if err != nil || gotCfg.AckWait != time.Second || gotCfg.Name != "D1" {
		t.Fatalf("config = %+v, %v", gotCfg, err)
	}
	c2, err := l2.OpenConsumer("D1", gotCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close() //nolint:errcheck
	if got := c2.Info(); got != want {
		t.Fatalf("info after crash = %+v, want %+v", got, want)
	}
	if !slices.Equal(c2.PendingSeqs(), []uint64{1, 3}) || !slices.Equal(c2.Due(), []uint64{3}) {
		t.Fatalf("pending %v due %v", c2.PendingSeqs(), c2.Due())
	}
}

func TestConsumerCompaction(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	defer l.Close() //nolint:errcheck
	c, err := l.OpenConsumer("C", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Enough deliveries and acks to roll the journal a few times.
	const n = 4000
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for seq := uint64(w + 1); seq <= n; seq += 4 {
				if _, err := c.Deliver(seq); err != nil {
					t.Error(err)
					return
				}
				if seq%10 != 0 {
					if _, err := c.Ack(seq); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	want := c.Info()
	if want.NumAckPending != n/10 {
		t.Fatalf("pending = %d", want.NumAckPending)
	}
	names, _ := fsys.ReadDir(path.Join("/s", consumersDir, "C"))
	if !slices.Contains(names, snapFile) {
		t.Fatalf("no snapshot after %d ops: %v", 2*n, names)
	}
	crashed := fsys.CrashClone(nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openConsumerLog(t, crashed, clock)
	defer l2.Close() //nolint:errcheck
	c2, err := l2.OpenConsumer("C", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close() //nolint:errcheck
	if got := c2.Info(); got != want || len(c2.Corrupt()) != 0 {
		t.Fatalf("info after reopen = %+v, want %+v (corrupt %v)", got, want, c2.Corrupt())
	}
}

func TestConsumerTornJournal(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	c, err := l.OpenConsumer("T", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 5; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	jname := path.Join("/s", consumersDir, "T", journalName(0))
	f, _ := fsys.OpenFile(jname, 0, 0)
	st, _ := f.Stat()
	_ = f.Close()
	truncateFile(t, fsys, jname, st.Size()-3)
	l2 := openConsumerLog(t, fsys, clock)
	defer l2.Close() //nolint:errcheck
	c2, err := l2.OpenConsumer("T", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close() //nolint:errcheck
	if !slices.Equal(c2.PendingSeqs(), []uint64{1, 2, 3, 4}) {
		t.Fatalf("pending after torn journal = %v", c2.PendingSeqs())
	}
	if _, err := c2.Deliver(5); err != nil {
		t.Fatal(err)
	}
}

func TestConsumerDamagedSnapshotKeepsJournal(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	c, err := l.OpenConsumer("S", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Past one compaction (16 KiB of journal), then a few more deliveries.
	var seq uint64
	for seq = 1; seq <= 600; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	// Closing the log closes the consumer too.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ack(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("ack after log close = %v", err)
	}
	flipBit(t, fsys, path.Join("/s", consumersDir, "S", snapFile), 8, 2)
	l2 := openConsumerLog(t, fsys, clock)
	defer l2.Close() //nolint:errcheck
	c2, err := l2.OpenConsumer("S", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(c2.Corrupt()) != 1 {
		t.Fatalf("corrupt = %v", c2.Corrupt())
	}
	// What the journal after the snapshot says is still pending, and the
	// stream is delivered again from the start: nothing is skipped.
	info := c2.Info()
	if info.Delivered.Stream != 0 || info.AckFloor != (SeqPair{}) || info.Delivered.Consumer != 600 {
		t.Fatalf("info after damaged snapshot = %+v", info)
	}
	pending := c2.PendingSeqs()
	if len(pending) == 0 || pending[len(pending)-1] != 600 {
		t.Fatalf("journal pending lost: %v", pending)
	}
	if p, err := c2.Deliver(1); err != nil || p.Consumer != 601 {
		t.Fatalf("redeliver from start = %+v, %v", p, err)
	}
	if got := c2.Info().AckFloor.Stream; got != 0 {
		t.Fatalf("ack floor = %d, want 0 until seq 1 is acked", got)
	}
}

func TestConsumerDiskFullCatchesUp(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	var full atomic.Bool
	fsys.SetFault(func(op, name string) error {
		if full.Load() && op == "write" && strings.Contains(name, journalPrefix) {
			return syscall.ENOSPC
		}
		return nil
	})
	l := openConsumerLog(t, fsys, clock)
	c, err := l.OpenConsumer("F", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	full.Store(true)
	if _, err := c.Ack(2); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("ack on full disk = %v", err)
	}
	full.Store(false)
	if _, err := c.Ack(3); err != nil {
		t.Fatalf("ack after disk freed = %v", err)
	}
	want := c.Info()
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openConsumerLog(t, crashed, clock)
	defer l2.Close() //nolint:errcheck
	c2, err := l2.OpenConsumer("F", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Info(); got != want || !slices.Equal(c2.PendingSeqs(), []uint64{1}) {
		t.Fatalf("after reopen %+v pending %v, want %+v", got, c2.PendingSeqs(), want)
	}
}

func TestConsumerFailedFsyncFences(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	var fail atomic.Bool
	fsys.SetFault(func(op, name string) error {
		if fail.Load() && op == "sync" && strings.Contains(name, journalPrefix) {
			return syscall.EIO
		}
		return nil
	})
	l := openConsumerLog(t, fsys, newFakeClock())
	defer l.Close() //nolint:errcheck
	c, err := l.OpenConsumer("E", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if _, err := c.Deliver(1); !errors.Is(err, ErrWriteFenced) {
		t.Fatalf("deliver with failing fsync = %v", err)
	}
	fail.Store(false)
	if _, err := c.Ack(1); !errors.Is(err, ErrWriteFenced) {
		t.Fatalf("ack after fence = %v", err)
	}
}

func TestConsumerApplyBatchesChanges(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	c, err := l.OpenConsumer("B", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Apply(func(s *ConsumerState) error {
		for seq := uint64(1); seq <= 5; seq++ {
			s.Deliver(seq)
		}
		s.Ack(2)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openConsumerLog(t, crashed, clock)
	defer l2.Close() //nolint:errcheck
	c2, err := l2.OpenConsumer("B", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.PendingSeqs(); !slices.Equal(got, []uint64{1, 3, 4, 5}) {
		t.Fatalf("pending after Apply and crash = %v", got)
	}
}

// A lazy change is written at once (it survives a process crash) and
// becomes power-safe with the next synced change.
func TestConsumerApplyLazySyncsWithTheNextSyncedChange(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	defer l.Close() //nolint:errcheck
	c, err := l.OpenConsumer("L", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyLazy(func(s *ConsumerState) error { s.Deliver(1); s.Deliver(2); return nil }); err != nil {
		t.Fatal(err)
	}
	reopen := func(fs *vfs.MemFS) []uint64 {
		t.Helper()
		l2 := openConsumerLog(t, fs, clock)
		defer l2.Close() //nolint:errcheck
		c2, err := l2.OpenConsumer("L", ConsumerConfig{AckWait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close() //nolint:errcheck
		return c2.PendingSeqs()
	}
	if got := reopen(fsys.CrashClone(nil)); len(got) != 0 {
		t.Fatalf("unsynced lazy change survived a power cut: %v", got)
	}
	if err := c.Apply(func(s *ConsumerState) error { s.Ack(1); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := reopen(fsys.CrashClone(nil)); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("after a synced change: pending %v, want [2]", got)
	}
}
