package jetlog

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// lazyFixture is a closed stream of several segments with deletes, and what
// a reader saw of it before the clean Close.
type lazyFixture struct {
	fsys     *vfs.MemFS
	opts     Options
	cfg      StreamConfig
	state    State
	counts   map[string]uint64
	msgs     map[uint64]string // seq -> subject/data
	segments int               // index files a full read loads
}

func buildLazyFixture(t *testing.T) lazyFixture {
	t.Helper()
	fx := lazyFixture{fsys: vfs.NewMemFS(), cfg: StreamConfig{Name: "S"}, msgs: map[uint64]string{}}
	fx.opts = Options{FS: fx.fsys, SegmentSize: 2 << 10, ExpireEvery: -1}
	l, err := Open("/s", fx.cfg, fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 600 {
		subj := fmt.Sprintf("ev.%d", i%7)
		data := fmt.Sprintf("m%d", i)
		seq := mustAppend(t, l, subj, data)
		fx.msgs[seq] = subj + "/" + data
	}
	for seq := uint64(3); seq <= 600; seq += 5 { // interior deletes everywhere
		if err := l.Delete(seq); err != nil {
			t.Fatal(err)
		}
		delete(fx.msgs, seq)
	}
	if _, err := l.Purge(PurgeOptions{Seq: 40}); err != nil { // and a moved floor
		t.Fatal(err)
	}
	for seq := range fx.msgs {
		if seq < 40 {
			delete(fx.msgs, seq)
		}
	}
	fx.state, fx.counts = l.State(), l.SubjectCounts("")
	for i, seg := range l.cat.segs {
		if seg.live > 0 || i == len(l.cat.segs)-1 {
			fx.segments++ // the active one, and each with a message to load
		}
	}
	if fx.segments < 5 {
		t.Fatalf("fixture has %d segments, want several", fx.segments)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fx
}

// countIndexOpens counts the index files opened from now on.
func countIndexOpens(fsys *vfs.MemFS) func() int {
	var mu sync.Mutex
	n := 0
	fsys.SetFault(func(op, name string) error {
		if op == "open" && strings.HasSuffix(name, idxSuffix) {
			mu.Lock()
			n++
			mu.Unlock()
		}
		return nil
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// verify compares every read of the reopened log with the fixture.
func (fx lazyFixture) verify(t *testing.T, l *Log) {
	t.Helper()
	st := l.State()
	if st.Msgs != fx.state.Msgs || st.Bytes != fx.state.Bytes || st.FirstSeq != fx.state.FirstSeq ||
		st.LastSeq != fx.state.LastSeq || st.NumDeleted != fx.state.NumDeleted || st.NumSubjects != fx.state.NumSubjects ||
		!st.FirstTime.Equal(fx.state.FirstTime) || !st.LastTime.Equal(fx.state.LastTime) {
		t.Fatalf("state %+v, before the reopen %+v", st, fx.state)
	}
	n := 0
	for m, err := range l.Messages(0) {
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Subject + "/" + string(m.Data); fx.msgs[m.Seq] != got {
			t.Fatalf("seq %d = %q, want %q", m.Seq, got, fx.msgs[m.Seq])
		}
		n++
	}
	if n != len(fx.msgs) {
		t.Fatalf("iterated %d messages, want %d", n, len(fx.msgs))
	}
}

func TestCleanReopenReadsOnlyTheActiveIndex(t *testing.T) {
	fx := buildLazyFixture(t)
	opened := countIndexOpens(fx.fsys)
	l := openLog(t, "/s", fx.cfg, fx.opts)
	rep := l.Recovery()
	if !rep.CatalogRestored || rep.Scanned != 0 || len(rep.Problems) != 0 {
		t.Fatalf("recovery %+v", rep)
	}
	if got := opened(); got != 1 {
		t.Fatalf("a clean Open read %d index files, want only the active one", got)
	}
	// Summaries answer without loading anything.
	if got := l.SubjectCounts(""); fmt.Sprint(got) != fmt.Sprint(fx.counts) {
		t.Fatalf("subject counts %v, want %v", got, fx.counts)
	}
	if st := l.State(); st.Msgs != fx.state.Msgs || !st.FirstTime.Equal(fx.state.FirstTime) {
		t.Fatalf("state %+v, want %+v", st, fx.state)
	}
	if got := l.NumPending(0, ""); got != fx.state.Msgs {
		t.Fatalf("NumPending = %d, want %d", got, fx.state.Msgs)
	}
	if got := l.NumPending(0, "ev.3"); got != fx.counts["ev.3"] {
		t.Fatalf("NumPending(ev.3) = %d, want %d", got, fx.counts["ev.3"])
	}
	if got := opened(); got != 1 {
		t.Fatalf("summary lookups read %d index files", got-1)
	}
	// One message loads one section.
	m := mustGet(t, l, 41)
	if fx.msgs[41] != m.Subject+"/"+string(m.Data) || opened() != 2 {
		t.Fatalf("Get(41) = %+v after %d index reads", m, opened())
	}
	fx.verify(t, l)
	if got := opened(); got != fx.segments {
		t.Fatalf("reading everything read %d index files, want %d", got, fx.segments)
	}
}

// Writes after a lazy reopen touch unloaded sections; a second clean
// reopen must agree with a full replay of the same files.
func TestLazyCatalogAgreesWithReplay(t *testing.T) {
	fx := buildLazyFixture(t)
	l, err := Open("/s", fx.cfg, fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{44, 300, 599} {
		if err := l.Delete(seq); err != nil {
			t.Fatal(err)
		}
		delete(fx.msgs, seq)
	}
	n, err := l.Purge(PurgeOptions{Subject: "ev.2", Keep: 3})
	if err != nil || n == 0 {
		t.Fatalf("purge ev.2: %d, %v", n, err)
	}
	var ev2 []uint64
	for seq := range uint64(601) {
		if strings.HasPrefix(fx.msgs[seq], "ev.2/") {
			ev2 = append(ev2, seq)
		}
	}
	for _, seq := range ev2[:len(ev2)-3] {
		delete(fx.msgs, seq)
	}
	mustAppend(t, l, "ev.9", "new")
	fx.msgs[601] = "ev.9/new"
	fx.state, fx.counts = l.State(), l.SubjectCounts("")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = openLog(t, "/s", fx.cfg, fx.opts)
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v", l.Recovery())
	}
	fx.verify(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Without the snapshot, the indexes and tombstones give the same.
	if err := fx.fsys.Remove(path.Join("/s", catalogFile)); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, "/s", fx.cfg, fx.opts)
	if l.Recovery().CatalogRestored {
		t.Fatal("restored a catalog that was removed")
	}
	fx.verify(t, l)
	if got := l.SubjectCounts(""); fmt.Sprint(got) != fmt.Sprint(fx.counts) {
		t.Fatalf("subject counts %v, want %v", got, fx.counts)
	}
}

// A sealed index damaged after the clean shutdown: the section loads by
// reading the segment instead, and nothing is lost.
func TestLazyLoadScansADamagedIndex(t *testing.T) {
	fx := buildLazyFixture(t)
	flipBit(t, fx.fsys, path.Join("/s", idxName(2)), 20, 3)
	l := openLog(t, "/s", fx.cfg, fx.opts)
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v", l.Recovery())
	}
	fx.verify(t, l)
	if l.cat.damaged.Load() {
		t.Fatal("catalog marked damaged although every record was found")
	}
	// The index was rewritten: it decodes again.
	data, err := readAll(fx.fsys, path.Join("/s", idxName(2)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := decodeIndex(data); !ok {
		t.Fatal("index of segment 2 not rebuilt")
	}
}

// A sealed segment and its index both damaged after the clean shutdown:
// the lost message is gone from reads at once and from the counts once the
// appender recounts, and the next Open rebuilds the catalog from the log
// and reports the lost seq exactly.
func TestLazyLoadReportsLostRecords(t *testing.T) {
	fx := buildLazyFixture(t)
	l, err := Open("/s", fx.cfg, fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	_, seg := l.cat.locate(200)
	m := l.cat.segs[l.cat.segIndex(200)]
	if m != seg {
		t.Fatal("locate and segIndex disagree")
	}
	off := seg.metas[200-seg.first].off
	id := seg.id
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	flipBit(t, fx.fsys, path.Join("/s", idxName(id)), 20, 3)
	flipBit(t, fx.fsys, path.Join("/s", segName(id)), off+12, 1)

	l, err = Open("/s", fx.cfg, fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Get(200); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(200) = %v, want ErrNotFound", err)
	}
	if !l.cat.damaged.Load() {
		t.Fatal("catalog not marked damaged")
	}
	if err := l.Sync(); err != nil { // any appender operation recounts
		t.Fatal(err)
	}
	st := l.State()
	var sum uint64
	for _, n := range l.SubjectCounts("") {
		sum += n
	}
	if st.Msgs != fx.state.Msgs-1 || sum != st.Msgs || st.Bytes >= fx.state.Bytes {
		t.Fatalf("after the recount: state %+v (subjects add up to %d), before the loss %+v", st, sum, fx.state)
	}
	if got := l.SubjectCounts("")[fx.msgs[200][:4]]; got != fx.counts[fx.msgs[200][:4]]-1 {
		t.Fatalf("subject of the lost message counts %d, want %d", got, fx.counts[fx.msgs[200][:4]]-1)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, "/s", fx.cfg, fx.opts)
	rep := l.Recovery()
	// The lazy load logged the damaged record and rewrote the index from
	// what the segment still holds; the replay reports the gap exactly.
	if rep.CatalogRestored || fmt.Sprint(rep.Lost) != "[{200 200}]" {
		t.Fatalf("recovery after the loss: %+v", rep)
	}
	delete(fx.msgs, 200)
	fx.state = l.State()
	fx.verify(t, l)
}

// A snapshot that does not match the files is not used.
func TestCatalogSnapshotMismatchFallsBack(t *testing.T) {
	fx := buildLazyFixture(t)
	snap, err := readAll(fx.fsys, path.Join("/s", catalogFile))
	if err != nil {
		t.Fatal(err)
	}
	l := openLog(t, "/s", fx.cfg, fx.opts)
	mustAppend(t, l, "ev.1", "after")
	fx.msgs[fx.state.LastSeq+1] = "ev.1/after"
	fx.state = l.State()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// The old snapshot describes a shorter active segment.
	if err := writeFileAtomic(fx.fsys, path.Join("/s", catalogFile), snap); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, "/s", fx.cfg, fx.opts)
	rep := l.Recovery()
	if rep.CatalogRestored || len(rep.Problems) == 0 {
		t.Fatalf("recovery %+v", rep)
	}
	fx.verify(t, l)
}

// Readers racing to load the same unloaded sections, while the appender
// appends and deletes, must see consistent data (run with -race).
func TestLazyLoadConcurrentReaders(t *testing.T) {
	fx := buildLazyFixture(t)
	l := openLog(t, "/s", fx.cfg, fx.opts)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint64(40 + r); seq <= 600; seq += 3 {
				want, live := fx.msgs[seq]
				m, err := l.Get(seq)
				switch {
				case live && err == nil && m.Subject+"/"+string(m.Data) != want:
					errs <- fmt.Errorf("Get(%d) = %q, want %q", seq, m.Subject+"/"+string(m.Data), want)
					return
				case !live && !errors.Is(err, ErrNotFound):
					errs <- fmt.Errorf("Get(%d) of a deleted seq: %v", seq, err)
					return
				}
				_ = l.NumPending(seq, "ev.4")
				_ = l.State()
			}
		}()
	}
	for i := range 200 {
		mustAppend(t, l, "ev.new", fmt.Sprint(i))
		if seq := uint64(41 + 2*i); i%2 == 0 && fx.msgs[seq] != "" && seq%3 == 0 {
			_ = l.Delete(seq) // a concurrent reader may see it either way
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrNotFound) {
			t.Error(err)
		}
	}
}

// failFrom makes every file-system operation from the k-th on fail, as if
// the machine stopped there; it returns how many operations were seen.
func failFrom(fsys *vfs.MemFS, k int) func() int {
	var mu sync.Mutex
	n := 0
	fsys.SetFault(func(op, name string) error {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n > k {
			return errors.New("power cut")
		}
		return nil
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// A power cut at any point of a Close or of a clean Open (which restores
// and removes catalog.snap) loses nothing and leaves a log that opens
// (again cleanly after that) with the same contents.
func TestPowerLossDuringCloseAndOpen(t *testing.T) {
	fx := buildLazyFixture(t)
	for _, phase := range []string{"close", "open"} {
		for k := 0; ; k++ {
			fsys := fx.fsys.CrashClone(nil) // a private copy of the closed stream
			opts := fx.opts
			opts.FS = fsys
			want := lazyFixture{msgs: map[uint64]string{}}
			for seq, m := range fx.msgs {
				want.msgs[seq] = m
			}
			var seen int
			switch phase {
			case "close":
				l, err := Open("/s", fx.cfg, opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Delete(500); err != nil {
					t.Fatal(err)
				}
				delete(want.msgs, 500)
				seq := mustAppend(t, l, "ev.late", "late")
				want.msgs[seq] = "ev.late/late"
				count := failFrom(fsys, k)
				_ = l.Close() // fails from the cut on
				seen = count()
			case "open":
				count := failFrom(fsys, k)
				if l, err := Open("/s", fx.cfg, opts); err == nil {
					_ = l.Close()
				}
				seen = count()
			}
			fsys.SetFault(nil)
			after := fsys.CrashClone(nil)
			opts.FS = after
			for range 2 { // after the cut, then after a clean Close
				l, err := Open("/s", fx.cfg, opts)
				if err != nil {
					t.Fatalf("%s cut after %d ops: Open: %v", phase, k, err)
				}
				if rep := l.Recovery(); len(rep.Corrupt) != 0 || len(rep.Lost) != 0 {
					t.Fatalf("%s cut after %d ops: recovery %+v", phase, k, rep)
				}
				got := map[uint64]string{}
				for m, err := range l.Messages(0) {
					if err != nil {
						t.Fatalf("%s cut after %d ops: %v", phase, k, err)
					}
					got[m.Seq] = m.Subject + "/" + string(m.Data)
				}
				if fmt.Sprint(got) != fmt.Sprint(want.msgs) {
					t.Fatalf("%s cut after %d ops: %d messages, want %d", phase, k, len(got), len(want.msgs))
				}
				if st := l.State(); st.Msgs != uint64(len(want.msgs)) {
					t.Fatalf("%s cut after %d ops: state %+v", phase, k, st)
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if seen <= k { // the operation ran to its end before the cut
				t.Logf("%s: %d cut points", phase, k+1)
				break
			}
		}
	}
}

// Idle sections are dropped from memory and come back from their index,
// with deletes made before and after the eviction intact.
func TestEvictedSectionsReload(t *testing.T) {
	fx := buildLazyFixture(t)
	l := openLog(t, "/s", fx.cfg, fx.opts)
	fx.verify(t, l) // loads every section
	if err := l.Delete(100); err != nil {
		t.Fatal(err)
	}
	delete(fx.msgs, 100)
	n := evictAll(t, l)
	if n < 3 {
		t.Fatalf("evicted %d sections, want every sealed one with messages", n)
	}
	for _, seg := range l.cat.segs[:len(l.cat.segs)-1] {
		if seg.loaded.Load() {
			t.Fatalf("section %s still loaded", seg.name)
		}
	}
	opened := countIndexOpens(fx.fsys)
	if err := l.Delete(101); err != nil { // reloads one section
		t.Fatal(err)
	}
	delete(fx.msgs, 101)
	if got := opened(); got != 1 {
		t.Fatalf("one delete read %d index files", got)
	}
	fx.state, fx.counts = l.State(), l.SubjectCounts("")
	fx.verify(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, "/s", fx.cfg, fx.opts) // the snapshot of a half-evicted catalog
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v", l.Recovery())
	}
	fx.verify(t, l)
}

// After a clean restart, lookups of a rare subject read only the sections
// that hold it: the others are skipped or counted from their summary.
func TestRareSubjectLookupsSkipSections(t *testing.T) {
	fsys := vfs.NewMemFS()
	opts := Options{FS: fsys, SegmentSize: 1 << 10, ExpireEvery: -1}
	cfg := StreamConfig{Name: "S"}
	l, err := Open("/s", cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	first := mustAppend(t, l, "rare.a", "1")
	for i := range 400 {
		mustAppend(t, l, "common.a", fmt.Sprint(i))
	}
	last := mustAppend(t, l, "rare.a", "2")
	mustAppend(t, l, "common.a", "tail")
	segments := len(l.cat.segs)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, "/s", cfg, opts)
	if !l.Recovery().CatalogRestored || segments < 10 {
		t.Fatalf("%d segments, recovery %+v", segments, l.Recovery())
	}
	opened := countIndexOpens(fsys)
	if n := l.NumPending(first+1, "rare.a"); n != 1 {
		t.Fatalf("NumPending(rare) = %d", n)
	}
	if m, err := l.Next(first+1, "rare.a"); err != nil || m.Seq != last {
		t.Fatalf("Next(rare) = %d, %v; want %d", m.Seq, err, last)
	}
	if n := l.NumPending(first+1, "rare.*"); n != 1 {
		t.Fatalf("NumPending(rare.*) = %d", n)
	}
	if got := opened(); got > 2 {
		t.Fatalf("looking up a subject in 2 of %d segments read %d indexes", segments, got)
	}
}
