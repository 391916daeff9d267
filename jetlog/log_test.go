package jetlog

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

func TestLogAppendGet(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{})
		if st := l.State(); st.FirstSeq != 0 || st.LastSeq != 0 || st.Msgs != 0 {
			t.Fatalf("empty state = %+v", st)
		}
		hdr := []byte("NATS/1.0\r\nA: b\r\n\r\n")
		ack, err := l.Append(Msg{Subject: "orders.new", Header: hdr, Data: []byte("hello")}, Expect{})
		if err != nil || ack.Seq != 1 || ack.Duplicate {
			t.Fatalf("Append = %+v, %v", ack, err)
		}
		mustAppend(t, l, "orders.old", "x")
		m := mustGet(t, l, 1)
		if m.Subject != "orders.new" || string(m.Data) != "hello" || string(m.Header) != string(hdr) || m.Seq != 1 {
			t.Fatalf("Get(1) = %+v", m)
		}
		if _, err := l.Get(3); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(3) err = %v, want ErrNotFound", err)
		}
		st := l.State()
		if st.Msgs != 2 || st.FirstSeq != 1 || st.LastSeq != 2 || st.NumSubjects != 2 || st.Bytes == 0 {
			t.Fatalf("state = %+v", st)
		}
		acks, err := l.AppendBatch([]Msg{{Subject: "a"}, {Subject: "b"}, {Subject: "bad.*"}, {Subject: "c"}}, Expect{})
		if !errors.Is(err, ErrBadSubject) || len(acks) != 2 || acks[1].Seq != 4 {
			t.Fatalf("AppendBatch = %+v, %v", acks, err)
		}
	})
}

func TestLogRejectsBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage, MaxMsgSize: 4}, Options{})
		for _, subj := range []string{"", "a..b", "a.*", ">", "a b", ".a", "a."} {
			if _, err := l.Append(Msg{Subject: subj}, Expect{}); !errors.Is(err, ErrBadSubject) {
				t.Errorf("Append(%q) err = %v, want ErrBadSubject", subj, err)
			}
		}
		if _, err := l.Append(Msg{Subject: "a", Data: []byte("12345")}, Expect{}); !errors.Is(err, ErrMsgTooLarge) {
			t.Errorf("oversize err = %v", err)
		}
		if seq := mustAppend(t, l, "a", "1234"); seq != 1 {
			t.Errorf("seq after rejects = %d, want 1", seq)
		}
	})
}

func TestLogDeleteAndPurge(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		dir := t.TempDir()
		l := openLog(t, dir, StreamConfig{Name: "S", Storage: k.storage}, Options{})
		for i := range 10 {
			mustAppend(t, l, fmt.Sprintf("s.%d", i%3), "x")
		}
		if err := l.Delete(5); err != nil {
			t.Fatal(err)
		}
		if err := l.Delete(5); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete err = %v", err)
		}
		if st := l.State(); st.Msgs != 9 || st.NumDeleted != 1 {
			t.Fatalf("state = %+v", st)
		}
		n, err := l.Purge(PurgeOptions{Subject: "s.0", Keep: 1})
		if err != nil || n != 3 { // s.0: 1,4,7,10 -> keep 10
			t.Fatalf("purge subject keep = %d, %v", n, err)
		}
		n, err = l.Purge(PurgeOptions{Seq: 4})
		if err != nil || n != 2 { // 2,3
			t.Fatalf("purge seq = %d, %v", n, err)
		}
		if st := l.State(); st.FirstSeq != 6 || st.Msgs != 4 {
			t.Fatalf("state = %+v", st)
		}
		counts := l.SubjectCounts("s.*")
		if counts["s.1"] != 1 || counts["s.2"] != 2 || counts["s.0"] != 1 {
			t.Fatalf("counts = %v", counts)
		}
		for filter, want := range map[string]string{"s.2": "map[s.2:2]", "s.9": "map[]", "s..2": "map[]"} {
			if got := fmt.Sprint(l.SubjectCounts(filter)); got != want { // a literal is a lookup
				t.Fatalf("counts %q = %s, want %s", filter, got, want)
			}
		}
		n, err = l.Purge(PurgeOptions{})
		if err != nil || n != 4 {
			t.Fatalf("purge all = %d, %v", n, err)
		}
		if st := l.State(); st.FirstSeq != 11 || st.LastSeq != 10 || st.Msgs != 0 {
			t.Fatalf("after purge all = %+v", st)
		}
		if k.storage == StorageMemory {
			return
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2 := openLog(t, dir, StreamConfig{Name: "S"}, Options{})
		if st := l2.State(); st.FirstSeq != 11 || st.LastSeq != 10 || st.Msgs != 0 {
			t.Fatalf("reopened after purge all = %+v", st)
		}
		if seq := mustAppend(t, l2, "a", "x"); seq != 11 {
			t.Fatalf("seq after purge+reopen = %d", seq)
		}
	})
}

func TestLogReads(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		clock := newFakeClock()
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{Now: clock.Now})
		for i := range 6 {
			mustAppend(t, l, fmt.Sprintf("a.%d", i%2), fmt.Sprint(i))
			clock.Advance(time.Second)
		}
		m, err := l.LastBySubject("a.0")
		if err != nil || m.Seq != 5 {
			t.Fatalf("LastBySubject = %+v, %v", m, err)
		}
		m, err = l.LastBySubject("a.*")
		if err != nil || m.Seq != 6 {
			t.Fatalf("LastBySubject wildcard = %+v, %v", m, err)
		}
		m, err = l.Next(2, "a.0")
		if err != nil || m.Seq != 3 {
			t.Fatalf("Next = %+v, %v", m, err)
		}
		m, err = l.Next(2, "a.>")
		if err != nil || m.Seq != 2 {
			t.Fatalf("Next wildcard = %+v, %v", m, err)
		}
		start := time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC)
		if seq := l.SeqAtTime(start); seq != 3 {
			t.Fatalf("SeqAtTime = %d, want 3", seq)
		}
		if n := l.NumPending(3, "a.0"); n != 2 {
			t.Fatalf("NumPending(3, a.0) = %d", n)
		}
		if n := l.NumPending(2, ""); n != 5 {
			t.Fatalf("NumPending(2) = %d", n)
		}
		if n := l.NumPending(0, "a.*"); n != 6 {
			t.Fatalf("NumPending(0, a.*) = %d", n)
		}
		var seqs []uint64
		for m, err := range l.Messages(4) {
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, m.Seq)
		}
		if !slices.Equal(seqs, []uint64{4, 5, 6}) {
			t.Fatalf("Messages = %v", seqs)
		}
	})
}

func TestLogReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	cfg := StreamConfig{Name: "S"}
	l, err := Open(dir, cfg, Options{SegmentSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		mustAppend(t, l, fmt.Sprintf("k.%d", i%5), fmt.Sprint(i))
	}
	if err := l.Delete(7); err != nil {
		t.Fatal(err)
	}
	want := l.State()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, dir, cfg, Options{SegmentSize: 200})
	rep := l2.Recovery()
	if !rep.Clean || rep.Scanned != 0 || len(rep.Corrupt) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	if got := l2.State(); got != want {
		t.Fatalf("state after reopen = %+v, want %+v", got, want)
	}
	for seq := uint64(1); seq <= 50; seq++ {
		m, err := l2.Get(seq)
		if seq == 7 {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("deleted seq 7: %v", err)
			}
			continue
		}
		if err != nil || string(m.Data) != fmt.Sprint(seq-1) {
			t.Fatalf("Get(%d) = %+v, %v", seq, m, err)
		}
	}
}

func TestRemoveStream(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	l, err := Open("/streams/S", StreamConfig{Name: "S"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "a", "x")
	c, err := l.OpenConsumer("C", ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deliver(1); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := RemoveStream(fsys, "/streams/S"); err != nil {
		t.Fatal(err)
	}
	if names, err := fsys.ReadDir("/streams"); err != nil || len(names) != 0 {
		t.Fatalf("left behind: %v, %v", names, err)
	}
}

func TestAppendDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	l := openLog(t, "", StreamConfig{Name: "S", Storage: StorageMemory}, Options{})
	payload := make([]byte, 128)
	mustAppend(t, l, "alloc.subject.that.is.longer.than.thirty.two.bytes", "warm up")
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := l.Append(Msg{Subject: "alloc.subject.that.is.longer.than.thirty.two.bytes", Data: payload}, Expect{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Append allocates %v times per call", allocs)
	}
}

func TestNextMatchesBruteForce(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{})
		subjects := []string{"a.x", "a.y", "b.x", "b.y.z"}
		var all []string
		for i := range 200 {
			s := subjects[(i*7+i/3)%len(subjects)]
			all = append(all, s)
			mustAppend(t, l, s, "x")
		}
		for seq := uint64(1); seq <= 200; seq += 9 {
			if err := l.Delete(seq); err != nil {
				t.Fatal(err)
			}
		}
		for _, filter := range []string{"a.*", "b.>", "*.x", ">", "", "a.x", "c.*"} {
			for from := uint64(0); from <= 201; from++ {
				var want uint64
				for seq := max(from, 1); seq <= 200; seq++ {
					if (seq-1)%9 != 0 && modelMatch(filter, all[seq-1]) {
						want = seq
						break
					}
				}
				m, err := l.Next(from, filter)
				if want == 0 {
					if !errors.Is(err, ErrNotFound) {
						t.Fatalf("Next(%d, %q) = %d, %v; want none", from, filter, m.Seq, err)
					}
					continue
				}
				if err != nil || m.Seq != want {
					t.Fatalf("Next(%d, %q) = %d, %v; want %d", from, filter, m.Seq, err, want)
				}
			}
		}
	})
}

// Next and NumPending with several filters agree with a brute-force
// model for sets of filters, overlapping ones and duplicates included, on
// the slot walk (many subjects) and the per-subject paths (few).
func TestMultiFilterReadsMatchBruteForce(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		for _, many := range []bool{false, true} {
			l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{SegmentSize: 4096})
			subjects := []string{"a.x", "a.y", "b.x", "b.y.z", "c"}
			if many {
				for i := range 60 {
					subjects = append(subjects, fmt.Sprintf("m.%d.x", i))
				}
			}
			all := seedSpread(t, l, subjects)
			sets := [][]string{
				nil, {}, {"a.x"}, {"a.x", "b.x"}, {"a.*", "*.x"}, {"a.x", "a.x"}, {"a.x", "a.*"},
				{"b.>", "c"}, {"zz", "a.y"}, {"zz"}, {"a.*", ">"}, {"m.*.x", "c"}, {"m.7.x", "m.8.x", "m.9.x", "a.y", "b.y.z"},
			}
			for _, filters := range sets {
				for from := uint64(0); from <= 302; from += 3 {
					var want, count uint64
					for seq := max(from, 1); seq <= 300; seq++ {
						if (seq-1)%7 == 0 {
							continue
						}
						match := len(filters) == 0
						for _, f := range filters {
							match = match || modelMatch(f, all[seq-1])
						}
						if match {
							if want == 0 {
								want = seq
							}
							count++
						}
					}
					if got := l.NumPending(from, filters...); got != count {
						t.Fatalf("NumPending(%d, %q...) = %d, want %d", from, filters, got, count)
					}
					m, err := l.Next(from, filters...)
					if want == 0 {
						if !errors.Is(err, ErrNotFound) {
							t.Fatalf("Next(%d, %q...) = %d, %v; want none", from, filters, m.Seq, err)
						}
						continue
					}
					if err != nil || m.Seq != want {
						t.Fatalf("Next(%d, %q...) = %d, %v; want %d", from, filters, m.Seq, err, want)
					}
				}
			}
		}
	})
}

func TestNextManyFiltersAllocatesLikeOne(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	l := openLog(t, "", StreamConfig{Name: "S", Storage: StorageMemory}, Options{})
	for i := range 100 {
		mustAppend(t, l, fmt.Sprintf("s.%d", i%10), "x")
	}
	next := testing.AllocsPerRun(200, func() { _, _ = l.Next(50, "s.3") })
	filters := []string{"s.3", "s.*.x", "t.>", "s.4"}
	multi := testing.AllocsPerRun(200, func() { _, _ = l.Next(50, filters...) })
	pending := testing.AllocsPerRun(200, func() { _ = l.NumPending(50, filters...) })
	if multi > next || pending > 0 {
		t.Fatalf("Next with 4 filters allocates %v (with one %v), NumPending %v", multi, next, pending)
	}
}

func TestOpenLocksDirectory(t *testing.T) {
	t.Parallel()
	for _, fsys := range []FS{vfs.OSFS{}, vfs.NewMemFS()} {
		dir := t.TempDir()
		l, err := Open(dir, StreamConfig{Name: "S"}, Options{FS: fsys})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir, StreamConfig{Name: "S"}, Options{FS: fsys}); !errors.Is(err, ErrLocked) {
			t.Fatalf("%T: second Open err = %v, want ErrLocked", fsys, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := Open(dir, StreamConfig{Name: "S"}, Options{FS: fsys})
		if err != nil {
			t.Fatalf("%T: Open after Close: %v", fsys, err)
		}
		if err := l2.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
