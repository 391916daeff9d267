package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// rollupCase is a stream of five messages (a.x at 1..3, b.y at 4..5) and
// an atomic batch of three whose first message rolls up: what the stream
// holds before the batch and after it, as "seq subject" lines.
type rollupCase struct {
	name          string
	rollup        Rollup
	before, after []string
}

var rollupCases = []rollupCase{
	{"subject", RollupSubject,
		[]string{"1 a.x", "2 a.x", "3 a.x", "4 b.y", "5 b.y"},
		[]string{"4 b.y", "5 b.y", "6 a.x", "7 c.z", "8 d.w"}},
	{"all", RollupAll,
		[]string{"1 a.x", "2 a.x", "3 a.x", "4 b.y", "5 b.y"},
		[]string{"6 a.x", "7 c.z", "8 d.w"}},
}

var rollupCfg = StreamConfig{Name: "R", Durability: DurabilityAlways}

func (c rollupCase) fill(t *testing.T, l *Log) {
	t.Helper()
	for _, s := range []string{"a.x", "a.x", "a.x", "b.y", "b.y"} {
		mustAppend(t, l, s, "old")
	}
}

func (c rollupCase) batch() ([]Msg, []Expect) {
	msgs := []Msg{{Subject: "a.x", Data: []byte("new")}, {Subject: "c.z"}, {Subject: "d.w"}}
	return msgs, []Expect{{Rollup: c.rollup}, {}, {}}
}

// contents lists what l holds as "seq subject" lines.
func contents(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for m, err := range l.Messages(0) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s", m.Seq, m.Subject))
	}
	return out
}

func TestAppendAtomicRollup(t *testing.T) {
	t.Parallel()
	for _, c := range rollupCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			forEachStore(t, func(t *testing.T, k storeKind) {
				dir := t.TempDir()
				cfg := rollupCfg
				cfg.Storage = k.storage
				l, err := Open(dir, cfg, Options{})
				if err != nil {
					t.Fatal(err)
				}
				c.fill(t, l)
				msgs, ex := c.batch()
				if _, err := l.AppendAtomic(msgs, ex); err != nil {
					t.Fatal(err)
				}
				if got := contents(t, l); !slices.Equal(got, c.after) {
					t.Fatalf("after the batch: %q, want %q", got, c.after)
				}
				if st := l.State(); st.Msgs != uint64(len(c.after)) || st.LastSeq != 8 {
					t.Fatalf("state %+v", st)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				if k.storage == StorageMemory {
					return
				}
				l = openLog(t, dir, cfg, Options{})
				if got := contents(t, l); !slices.Equal(got, c.after) {
					t.Fatalf("after a restart: %q, want %q", got, c.after)
				}
			})
		})
	}
}

// TestAppendAtomicRollupRefusedLeavesAll: a batch refused after its
// rollup was staged removes nothing, and the commit's other requests
// are not affected.
func TestAppendAtomicRollupRefusedLeavesAll(t *testing.T) {
	t.Parallel()
	c := rollupCases[1]
	l := openLog(t, t.TempDir(), rollupCfg, Options{})
	c.fill(t, l)
	msgs, ex := c.batch()
	ex[2] = Expect{LastSeq: 99, HasLastSeq: true}
	if _, err := l.AppendAtomic(msgs, ex); !errors.Is(err, ErrWrongLastSeq) {
		t.Fatalf("batch: %v", err)
	}
	if got := contents(t, l); !slices.Equal(got, c.before) {
		t.Fatalf("after a refusal: %q, want %q", got, c.before)
	}
}

// TestAppendRollupEndsCommit: appends queued behind a rollup are stored
// after it, in a commit of their own, and are not rolled up.
func TestAppendRollupEndsCommit(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), rollupCfg, Options{})
	mustAppend(t, l, "a.x", "old")
	done := make(chan error, 3)
	cb := func(_ PubAck, err error) { done <- err }
	l.AppendAsync(Msg{Subject: "a.x"}, Expect{}, cb)
	l.AppendAsync(Msg{Subject: "a.x"}, Expect{Rollup: RollupSubject}, cb)
	l.AppendAsync(Msg{Subject: "a.x"}, Expect{}, cb)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got, want := contents(t, l), []string{"3 a.x", "4 a.x"}; !slices.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
}

// TestAppendAtomicRollupTornEveryOffset cuts the segment at every byte
// of the write holding a rolled-up batch and its tombstone: recovery has
// the stream as before the batch or as after it with its removals, never
// the batch without them.
func TestAppendAtomicRollupTornEveryOffset(t *testing.T) {
	t.Parallel()
	for _, c := range rollupCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fsys := vfs.NewMemFS()
			l, err := Open("/s", rollupCfg, Options{FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			c.fill(t, l)
			start := l.active().size // the file is longer: preallocated
			msgs, ex := c.batch()
			if _, err := l.AppendAtomic(msgs, ex); err != nil {
				t.Fatal(err)
			}
			end := l.active().size
			base := fsys.CrashClone(nil)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if end <= start+int64(recordSize("a.x", nil, []byte("new"))) {
				t.Fatalf("batch written at %d..%d", start, end)
			}
			for cut := start; cut <= end; cut++ {
				fs := base.CrashClone(nil)
				truncateFile(t, fs, firstSeg, cut)
				want := c.before
				if cut == end {
					want = c.after
				}
				checkRollupRecovery(t, fs, fmt.Sprintf("cut %d", cut), want)
			}
		})
	}
}

// TestAppendAtomicRollupCrashEveryOp crashes the file system at every
// operation (write, sync, truncate, ...) of a rolled-up batch's commit:
// that operation fails (a write after storing half its bytes, as a
// full disk may) and so does every later one, then the disk is cloned
// as a power cut leaves it, keeping random prefixes of what was not
// synced. Recovery has the stream as before the batch or as after it
// with its removals; after the last operation, always as after. The
// MemFS keeps unsynced bytes only past a file's synced length, so the
// commit is also run with the segment not preallocated, where a cut
// write leaves a torn tail.
func TestAppendAtomicRollupCrashEveryOp(t *testing.T) {
	t.Parallel()
	for _, c := range rollupCases {
		for _, prealloc := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/prealloc=%v", c.name, prealloc), func(t *testing.T) {
				t.Parallel()
				crashEveryOp(t, c, prealloc)
			})
		}
	}
}

func crashEveryOp(t *testing.T, c rollupCase, prealloc bool) {
	rng := rand.New(rand.NewPCG(28, 9))
	for point := 1; ; point++ {
		fsys := vfs.NewMemFS()
		var opened FS = fsys
		if !prealloc {
			opened = noAllocFS{fsys}
		}
		l, err := Open("/s", rollupCfg, Options{FS: opened})
		if err != nil {
			t.Fatal(err)
		}
		c.fill(t, l)
		ops := 0
		fsys.SetFault(func(op, name string) error {
			if ops++; ops >= point {
				return errors.New("power cut")
			}
			return nil
		})
		msgs, ex := c.batch()
		_, appendErr := l.AppendAtomic(msgs, ex)
		cut := ops >= point
		crashed := []*vfs.MemFS{fsys.CrashClone(nil)}
		for range 64 { // random cuts of the unsynced bytes, so some in the tombstone
			crashed = append(crashed, fsys.CrashClone(rng))
		}
		fsys.SetFault(nil)
		_ = l.Close() // after the cut it may fail; the clones are taken
		if !cut {
			if appendErr != nil {
				t.Fatalf("point %d: no cut, but %v", point, appendErr)
			}
			// Past the commit's last operation: it is durable.
			checkRollupRecovery(t, crashed[0], "uncut", c.after)
			if point < 3 {
				t.Fatalf("only %d operations in the commit", point-1)
			}
			return
		}
		for i, fs := range crashed {
			checkRollupRecovery(t, fs, fmt.Sprintf("point %d clone %d", point, i), c.before, c.after)
		}
	}
}

// noAllocFS is a MemFS whose files cannot preallocate (no Allocate).
type noAllocFS struct{ *vfs.MemFS }

type noAllocFile struct{ vfs.File }

func (n noAllocFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := n.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noAllocFile{f}, nil
}

func (n noAllocFS) Create(name string) (vfs.File, error) {
	f, err := n.MemFS.Create(name)
	if err != nil {
		return nil, err
	}
	return noAllocFile{f}, nil
}

// checkRollupRecovery opens a crashed copy and checks that it holds one
// of the wanted contents, reports no corruption and takes appends.
func checkRollupRecovery(t *testing.T, fs *vfs.MemFS, what string, want ...[]string) {
	t.Helper()
	l, err := Open("/s", rollupCfg, Options{FS: fs})
	if err != nil {
		t.Fatalf("%s: open: %v", what, err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Errorf("%s: close: %v", what, err)
		}
	}()
	if rep := l.Recovery(); len(rep.Corrupt) != 0 {
		t.Fatalf("%s: corruption %+v", what, rep.Corrupt)
	}
	got := contents(t, l)
	if !slices.ContainsFunc(want, func(w []string) bool { return slices.Equal(got, w) }) {
		t.Fatalf("%s: recovered %q, want one of %q", what, got, want)
	}
	if _, err := l.Append(Msg{Subject: "after"}, Expect{}); err != nil {
		t.Fatalf("%s: append after recovery: %v", what, err)
	}
}
