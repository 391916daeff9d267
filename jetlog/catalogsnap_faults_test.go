package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// slowFS wraps MemFS to stretch two moments without holding MemFS's mutex
// (which would order the goroutines): the creation of the dedup snapshot
// at Close, and the end of an index read.
type slowFS struct {
	*vfs.MemFS
	armed     atomic.Bool
	idxSlowed atomic.Bool
}

func (s *slowFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if s.armed.Load() && flag&os.O_CREATE != 0 && strings.HasSuffix(name, dedupFile+tmpSuffix) {
		time.Sleep(100 * time.Millisecond) // Close has set closed; readers get in
	}
	f, err := s.MemFS.OpenFile(name, flag, perm)
	if err != nil || !s.armed.Load() || flag&os.O_CREATE != 0 || !strings.HasSuffix(name, idxSuffix) {
		return f, err
	}
	if !s.idxSlowed.CompareAndSwap(false, true) {
		return f, err
	}
	return slowCloseFile{f}, nil
}

func (s *slowFS) Create(name string) (vfs.File, error) {
	return s.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// slowCloseFile sleeps after closing: the index bytes are read, the section
// not filled yet.
type slowCloseFile struct{ vfs.File }

func (f slowCloseFile) Close() error {
	err := f.File.Close()
	time.Sleep(300 * time.Millisecond)
	return err
}

// Close snapshots the catalog; readers that come after it has begun must
// not load sections concurrently (run with -race; slowFS widens the
// window between Close setting closed and taking the snapshot).
func TestCloseDoesNotRaceLazyLoads(t *testing.T) {
	fx := buildLazyFixture(t)
	sfs := &slowFS{MemFS: fx.fsys}
	opts := fx.opts
	opts.FS = sfs
	l, err := Open("/s", fx.cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v", l.Recovery())
	}
	var from uint64 // inside a sealed section that is still unloaded
	for _, seg := range l.cat.segs[:len(l.cat.segs)-1] {
		if seg.live > 1 && !seg.loaded.Load() && seg.slots() > 2 && seg.first > l.cat.base {
			from = seg.first + 1
			break
		}
	}
	if from == 0 {
		t.Fatal("no unloaded sealed section")
	}
	sfs.armed.Store(true)
	done := make(chan uint64)
	go func() {
		for {
			l.mu.RLock()
			closed := l.closed
			l.mu.RUnlock()
			if closed {
				break
			}
			time.Sleep(50 * time.Microsecond) // polling for Close to begin
		}
		done <- l.NumPending(from, "")
	}()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := <-done; n != 0 {
		t.Fatalf("NumPending on a closing log = %d, want 0", n)
	}
}

// lostRecordFixture is the lazy fixture with the record of the first live
// ev.0 message (in a sealed segment) and that segment's index both
// damaged after the clean Close. It returns the seq and ev.0's count.
func lostRecordFixture(t *testing.T) (lazyFixture, uint64, uint64) {
	t.Helper()
	fx := buildLazyFixture(t)
	l, err := Open("/s", fx.cfg, fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	s := l.cat.subjects["ev.0"]
	x, count := s.first, s.count
	m, seg := l.cat.locate(x)
	if seg == l.cat.segs[len(l.cat.segs)-1] {
		t.Fatal("want the seq in a sealed segment")
	}
	off, id := m.off, seg.id
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	flipBit(t, fx.fsys, path.Join("/s", idxName(id)), 20, 3)
	flipBit(t, fx.fsys, path.Join("/s", segName(id)), off+12, 1)
	return fx, x, count
}

// Once the appender has recounted, a lost first message of a subject is
// gone from every view: deleting it finds nothing, the counts add up, and
// a filtered read goes to the subject's next message.
func TestLostRecordLeavesSubjectConsistent(t *testing.T) {
	fx, x, count := lostRecordFixture(t)
	l := openLog(t, "/s", fx.cfg, fx.opts)
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v", l.Recovery())
	}
	if err := l.Delete(x); !errors.Is(err, ErrNotFound) { // loads the section, finds the loss
		t.Fatalf("Delete(%d) of the lost message: %v", x, err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, n := range l.SubjectCounts("") {
		sum += n
	}
	if st := l.State(); sum != st.Msgs || st.Msgs != fx.state.Msgs-1 {
		t.Errorf("subject counts add up to %d, State.Msgs = %d, before the loss %d", sum, st.Msgs, fx.state.Msgs)
	}
	if got := l.SubjectCounts("ev.0")["ev.0"]; got != count-1 {
		t.Errorf("ev.0 count %d, want %d", got, count-1)
	}
	m, err := l.Next(0, "ev.0")
	if err != nil || m.Seq <= x || m.Subject != "ev.0" {
		t.Errorf("Next(0, ev.0) = seq %d, %v; want the ev.0 message after %d", m.Seq, err, x)
	}
}

// The per-subject limit meets the lost first message in the same commit
// that discovers it: the append must still complete.
func TestLostRecordWithPerSubjectLimit(t *testing.T) {
	fx, _, count := lostRecordFixture(t)
	cfg := fx.cfg
	cfg.MaxMsgsPerSubject = int64(count) // nothing to remove at Open
	l := openLog(t, "/s", cfg, fx.opts)
	appendOrFail(t, l, "ev.0", "Append never returned: enforceLimits spins on a lost message", func() {})
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := l.SubjectCounts("ev.0")["ev.0"]; got > uint64(count) {
		t.Fatalf("ev.0 holds %d messages, limit %d", got, count)
	}
}

// The appender loads what the discard-old limits will remove from before
// it takes Log.mu, so readers are not blocked behind an index read.
func TestLimitsLoadSectionsOutsideTheLock(t *testing.T) {
	for name, limit := range map[string]func(*StreamConfig, lazyFixture){
		"max_msgs":    func(c *StreamConfig, fx lazyFixture) { c.MaxMsgs = int64(fx.state.Msgs) },
		"max_bytes":   func(c *StreamConfig, fx lazyFixture) { c.MaxBytes = int64(fx.state.Bytes) },
		"per_subject": func(c *StreamConfig, fx lazyFixture) { c.MaxMsgsPerSubject = int64(fx.counts["ev.1"]) },
	} {
		t.Run(name, func(t *testing.T) {
			fx := buildLazyFixture(t)
			cfg := fx.cfg
			limit(&cfg, fx) // at the limit: the next append removes the oldest
			l := openLog(t, "/s", cfg, fx.opts)
			if !l.Recovery().CatalogRestored {
				t.Fatalf("recovery %+v", l.Recovery())
			}
			var mu sync.Mutex
			var under []string
			fx.fsys.SetFault(func(op, name string) error {
				if op == "open" && strings.HasSuffix(name, idxSuffix) && !l.mu.TryRLock() {
					mu.Lock()
					under = append(under, path.Base(name))
					mu.Unlock()
				} else if op == "open" && strings.HasSuffix(name, idxSuffix) {
					l.mu.RUnlock()
				}
				return nil
			})
			defer fx.fsys.SetFault(nil)
			before := l.State()
			mustAppend(t, l, "ev.1", "over the limit")
			if st := l.State(); st.FirstSeq == before.FirstSeq && name != "per_subject" {
				t.Fatalf("nothing removed: %+v", st)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(under) > 0 {
				t.Errorf("index files read while Log.mu was held exclusively: %v", under)
			}
		})
	}
}

// NumPending over a partly counted section takes whichever way is
// cheapest (slots before, slots after, or per subject); all must agree.
func TestCountFromStrategiesAgree(t *testing.T) {
	for _, subjects := range []int{1, 3, 500} {
		fsys := vfs.NewMemFS()
		l := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: fsys, ExpireEvery: -1})
		live := map[uint64]bool{}
		for i := range 3000 {
			seq := mustAppend(t, l, fmt.Sprintf("s.%d", i%subjects), "x")
			live[seq] = true
		}
		for seq := uint64(5); seq <= 3000; seq += 7 {
			if err := l.Delete(seq); err != nil {
				t.Fatal(err)
			}
			delete(live, seq)
		}
		for _, from := range []uint64{2, 10, 1500, 2990, 3000} {
			var want uint64
			for seq := range live {
				if seq >= from {
					want++
				}
			}
			if got := l.NumPending(from, ""); got != want {
				t.Fatalf("%d subjects: NumPending(%d) = %d, want %d", subjects, from, got, want)
			}
		}
	}
}

// Readers loading sections outside Log.mu (prefetch) while the appender
// appends, deletes, purges and evicts, and the log closes: run with
// -race. What the catalog says afterwards must match a full replay.
func TestPrefetchRacesWriters(t *testing.T) {
	fx := buildLazyFixture(t)
	l, err := Open("/s", fx.cfg, fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				seq := uint64(40 + (i*37+r*101)%600)
				_, _ = l.Get(seq)
				_, _ = l.Next(seq, "ev.3")
				n := 0
				for _, err := range l.Messages(seq) {
					if err != nil || n > 50 {
						break
					}
					n++
				}
			}
		})
	}
	for i := range 60 {
		mustAppend(t, l, fmt.Sprintf("ev.%d", i%7), "more")
		_ = l.Delete(uint64(45 + 9*i))
		if i%10 == 0 {
			evictAll(t, l)
		}
		if i == 30 {
			if _, err := l.Purge(PurgeOptions{Subject: "ev.5", Keep: 10}); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, counts := l.State(), l.SubjectCounts("")
	close(stop)
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fx.fsys.Remove(path.Join("/s", catalogFile)); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, "/s", fx.cfg, fx.opts)
	if got := l.State(); got.Msgs != st.Msgs || got.FirstSeq != st.FirstSeq || got.LastSeq != st.LastSeq || got.Bytes != st.Bytes {
		t.Fatalf("replayed state %+v, catalog said %+v", got, st)
	}
	if got := l.SubjectCounts(""); fmt.Sprint(got) != fmt.Sprint(counts) {
		t.Fatalf("replayed subject counts %v, catalog said %v", got, counts)
	}
}

// unloadedSealedSeq returns a seq inside a sealed section that is still
// unloaded after a clean reopen.
func unloadedSealedSeq(t *testing.T, l *Log) uint64 {
	t.Helper()
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, seg := range l.cat.segs[:len(l.cat.segs)-1] {
		if seg.live > 1 && !seg.loaded.Load() && seg.first > l.cat.base {
			return seg.first + 1
		}
	}
	t.Fatal("no unloaded sealed section")
	return 0
}

// A prefetch checks its section under the shared lock, then loads it
// without: a Purge of everything in between clears the section and
// removes its files. The load must then read and write nothing (no
// orphan index for a removed segment).
func TestPrefetchOfARemovedSegmentWritesNothing(t *testing.T) {
	fx := buildLazyFixture(t)
	l := openLog(t, "/s", fx.cfg, fx.opts)
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v", l.Recovery())
	}
	seq := unloadedSealedSeq(t, l)

	// prefetch, first half: the check under the shared lock.
	l.mu.RLock()
	c := &l.cat
	i := c.segFrom(seq)
	if l.closed || i == len(c.segs) || c.segs[i].live == 0 || c.segs[i].loaded.Load() {
		l.mu.RUnlock()
		t.Fatal("prefetch would not load")
	}
	seg := c.segs[i]
	seg.acquire()
	l.mu.RUnlock()

	// The appender runs in the window.
	if _, err := l.Purge(PurgeOptions{}); err != nil {
		t.Fatal(err)
	}
	names, err := fx.fsys.ReadDir("/s")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, seg.name) || slices.Contains(names, idxName(seg.id)) {
		t.Fatalf("segment %s not removed by the purge: %v", seg.name, names)
	}

	// prefetch, second half: the load without the lock.
	c.load(seg)
	_ = seg.release()

	names, err = fx.fsys.ReadDir("/s")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, idxName(seg.id)) {
		t.Errorf("prefetch recreated %s for removed segment %s (orphan index; files: %v)",
			path.Join("/s", idxName(seg.id)), seg.name, names)
	}
}

// gateFS blocks the first index file opened once armed, until released.
type gateFS struct {
	*vfs.MemFS
	armed   atomic.Bool
	entered chan struct{} // closed when a read is held at the gate
	release chan struct{}
	once    sync.Once
}

func (g *gateFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if g.armed.Load() && flag&os.O_CREATE == 0 && strings.HasSuffix(name, idxSuffix) {
		held := false
		g.once.Do(func() { held = true })
		if held {
			close(g.entered)
			<-g.release
		}
	}
	return g.MemFS.OpenFile(name, flag, perm)
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	return g.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// While a reader loads a section without Log.mu (its index read held at a
// gate), appends, including one that creates a subject, and readers of
// the catalog go on.
func TestPrefetchDoesNotHoldUpAppends(t *testing.T) {
	fx := buildLazyFixture(t)
	g := &gateFS{MemFS: fx.fsys, entered: make(chan struct{}), release: make(chan struct{})}
	opts := fx.opts
	opts.FS = g
	l := openLog(t, "/s", fx.cfg, opts)
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v", l.Recovery())
	}
	mustAppend(t, l, "ev.1", "warm") // loads the active section first
	seq := unloadedSealedSeq(t, l)
	g.armed.Store(true)
	got := make(chan error, 1)
	go func() {
		_, err := l.Get(seq)
		got <- err
	}()
	<-g.entered
	appendOrFail(t, l, "brand.new", "an append waited for a reader's index read", func() { close(g.release) })
	if st := l.State(); st.LastSeq != fx.state.LastSeq+2 {
		t.Fatalf("state %+v", st)
	}
	close(g.release)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// appendOrFail appends in the background and fails the test, after calling
// unblock, if the append has not returned within 10 s: an appender that is
// stuck (for good, or on something the test holds) rather than slow.
func appendOrFail(t *testing.T, l *Log, subject, why string, unblock func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := l.Append(Msg{Subject: subject, Data: []byte("x")}, Expect{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		unblock()
		t.Fatal(why)
	}
}
