package jetlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Missing files must never make sequences go back nor vanish without a
// word: Open reports the lost range and the next append continues above
// every seq the stream ever assigned (issue 11).

// missingCfg gives segments of about 4 records of 200 B each.
var missingCfg = StreamConfig{Name: "M"}

const missingSegSize = 900

// buildSegments appends n 200 B messages to a MemFS log with small
// segments. With clean set it closes the log and returns the FS as left;
// otherwise it returns a crash clone taken before Close.
func buildSegments(t *testing.T, n int, clean bool) *vfs.MemFS {
	t.Helper()
	fsys := vfs.NewMemFS()
	l, err := Open("/s", missingCfg, Options{FS: fsys, SegmentSize: missingSegSize})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		mustAppend(t, l, fmt.Sprintf("m.%d", i), strings.Repeat("x", 200))
	}
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if clean {
		return fsys
	}
	return crashed
}

// segmentSeqs lists the segment ids of /s with the seq range of their
// messages.
func segmentSeqs(t *testing.T, fsys *vfs.MemFS) map[uint64]SeqRange {
	t.Helper()
	names, err := fsys.ReadDir("/s")
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]SeqRange{}
	for _, n := range names {
		id, ok := parseSegName(n)
		if !ok {
			continue
		}
		data, err := readAll(fsys, path.Join("/s", n))
		if err != nil {
			t.Fatal(err)
		}
		var r SeqRange
		for _, e := range scanSegment(nil, n, data, 0).entries {
			if e.kind != kindMsg {
				continue
			}
			if r.First == 0 {
				r.First = e.seq
			}
			r.Last = e.seq
		}
		out[id] = r
	}
	return out
}

func removeFiles(t *testing.T, fsys *vfs.MemFS, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := fsys.Remove(path.Join("/s", n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if err := fsys.SyncDir("/s"); err != nil {
		t.Fatal(err)
	}
}

func TestMissingSegment(t *testing.T) {
	t.Parallel()
	const n = 20
	cases := []struct {
		name  string
		clean bool
		pick  func(ids []uint64) uint64 // the segment to remove
	}{
		{"only_one", true, nil},
		{"last_after_clean_close", true, func(ids []uint64) uint64 { return ids[len(ids)-1] }},
		{"last_after_crash", false, func(ids []uint64) uint64 { return ids[len(ids)-1] }},
		{"middle", true, func(ids []uint64) uint64 { return ids[len(ids)/2] }},
		{"first", true, func(ids []uint64) uint64 { return ids[0] }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			count := n
			if tc.pick == nil {
				count = 3 // one segment
			}
			fsys := buildSegments(t, count, tc.clean)
			segs := segmentSeqs(t, fsys)
			var ids []uint64
			for id := range segs {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			victim := ids[0]
			if tc.pick != nil {
				if len(ids) < 4 {
					t.Fatalf("want several segments, got %v", ids)
				}
				victim = tc.pick(ids)
			}
			want := segs[victim]
			removeFiles(t, fsys, segName(victim), idxName(victim))

			var logBuf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logBuf, nil))
			l := openLog(t, "/s", missingCfg, Options{FS: fsys, SegmentSize: missingSegSize, Logger: logger})
			rep := l.Recovery()
			if !lostCovers(rep.Lost, want) {
				t.Errorf("Lost = %v, want it to report %v (segment %d removed)", rep.Lost, want, victim)
			}
			var found bool
			for _, loss := range rep.Losses {
				if loss.Stream == "M" && loss.First <= want.First && loss.Last >= want.Last {
					found = true
				}
			}
			if !found {
				t.Errorf("Losses = %+v, want one for stream M covering %v", rep.Losses, want)
			}
			if tc.clean { // exact, and acknowledged: the clean Close made them durable
				exact := []Loss{{Stream: "M", SeqRange: want, Segment: segName(victim), Reason: "segment missing", Acked: LossAcked}}
				if !slices.Equal(rep.Losses, exact) {
					t.Errorf("Losses = %+v, want %+v", rep.Losses, exact)
				}
			}
			if !strings.Contains(logBuf.String(), "lost") || !strings.Contains(logBuf.String(), fmt.Sprint(want.First)) {
				t.Errorf("log does not report the loss of %v:\n%s", want, logBuf.String())
			}
			l.mu.RLock()
			active := l.cat.segs[len(l.cat.segs)-1].id
			l.mu.RUnlock()
			if active <= ids[len(ids)-1] && victim == ids[len(ids)-1] {
				t.Errorf("active segment %d after segment %d went missing: ids are used again", active, victim)
			}
			if seq := mustAppend(t, l, "after", "x"); seq <= uint64(count) {
				t.Errorf("append after the loss got seq %d, at or below the %d assigned before", seq, count)
			}
			if st := l.State(); st.LastSeq <= uint64(count) {
				t.Errorf("State().LastSeq = %d, want above %d", st.LastSeq, count)
			}
		})
	}
}

// lostCovers reports whether the union of rs contains want.
func lostCovers(rs []SeqRange, want SeqRange) bool {
	for s := want.First; s <= want.Last; s++ {
		in := false
		for _, r := range rs {
			if r.First <= s && s <= r.Last {
				in = true
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// A missing index is rebuilt from its segment: nothing is lost.
func TestMissingIndexLosesNothing(t *testing.T) {
	t.Parallel()
	fsys := buildSegments(t, 20, true)
	segs := segmentSeqs(t, fsys)
	for id := range segs {
		removeFiles(t, fsys, idxName(id))
	}
	l := openLog(t, "/s", missingCfg, Options{FS: fsys, SegmentSize: missingSegSize})
	if rep := l.Recovery(); len(rep.Lost) > 0 || len(rep.Losses) > 0 {
		t.Fatalf("Lost = %v, Losses = %v, want none", rep.Lost, rep.Losses)
	}
	if st := l.State(); st.Msgs != 20 || st.LastSeq != 20 {
		t.Fatalf("State = %+v", st)
	}
	if seq := mustAppend(t, l, "after", "x"); seq != 21 {
		t.Fatalf("next seq %d, want 21", seq)
	}
}

// A store written before seq.mark existed opens unchanged: nothing is
// reported lost and sequences continue where they were.
func TestMissingMarkIsAnOldStore(t *testing.T) {
	t.Parallel()
	for _, clean := range []bool{true, false} {
		t.Run(fmt.Sprintf("clean=%v", clean), func(t *testing.T) {
			t.Parallel()
			fsys := buildSegments(t, 20, clean)
			removeFiles(t, fsys, markFile)
			l := openLog(t, "/s", missingCfg, Options{FS: fsys, SegmentSize: missingSegSize})
			rep := l.Recovery()
			if len(rep.Lost) > 0 || len(rep.Losses) > 0 || len(rep.Corrupt) > 0 {
				t.Fatalf("report %+v, want nothing lost", rep)
			}
			if st := l.State(); st.Msgs != 20 || st.LastSeq != 20 {
				t.Fatalf("State = %+v", st)
			}
			if seq := mustAppend(t, l, "after", "x"); seq != 21 {
				t.Fatalf("next seq %d, want 21", seq)
			}
		})
	}
}

// Sequences stay above the lost ones across a further restart, even when
// the log is emptied again.
func TestMissingSegmentSeqsStayUpAfterRestart(t *testing.T) {
	t.Parallel()
	fsys := buildSegments(t, 3, true)
	removeFiles(t, fsys, segName(1), idxName(1))
	l, err := Open("/s", missingCfg, Options{FS: fsys, SegmentSize: missingSegSize})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	crashed := fsys.CrashClone(nil)
	l = openLog(t, "/s", missingCfg, Options{FS: crashed, SegmentSize: missingSegSize})
	if seq := mustAppend(t, l, "after", "x"); seq != 4 {
		t.Fatalf("next seq %d, want 4", seq)
	}
}

// After a crash, a missing last segment is reported up to the reservation
// (the seqs past the durable mark as maybe acknowledged), and the stream
// goes on above it.
func TestMissingLastSegmentAfterCrashReportsTheReservation(t *testing.T) {
	t.Parallel()
	fsys := buildSegments(t, 20, false)
	var m seqMark
	if err := readChecked(fsys, nil, path.Join("/s", markFile), &m); err != nil {
		t.Fatal(err)
	}
	if m.Durable != 16 || m.Reserved < 20 || m.Seg != 5 || m.FirstSeg != 1 {
		t.Fatalf("mark %+v, want durable 16 (the last roll), seg 5, reserved >= 20", m)
	}
	removeFiles(t, fsys, segName(5))
	l := openLog(t, "/s", missingCfg, Options{FS: fsys, SegmentSize: missingSegSize})
	want := []Loss{{Stream: "M", SeqRange: SeqRange{17, m.Reserved}, Segment: segName(5), Reason: "segment missing", Acked: LossMaybeAcked}}
	if got := l.Recovery().Losses; !slices.Equal(got, want) {
		t.Fatalf("Losses = %+v, want %+v", got, want)
	}
	if seq := mustAppend(t, l, "after", "x"); seq != m.Reserved+1 {
		t.Fatalf("next seq %d, want %d", seq, m.Reserved+1)
	}
}

// The mark is not written per commit: a reservation covers at least 4,096
// seqs, more while they come fast, and it always covers the last seq.
func TestMarkReservesAhead(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	l := openLog(t, "/s", missingCfg, Options{FS: fsys})
	opened := l.Stats().MarkWrites
	batch := make([]Msg, 100)
	for i := range batch {
		batch[i] = Msg{Subject: "r", Data: []byte("x")}
	}
	for range 100 {
		if _, err := l.AppendBatch(batch, Expect{}); err != nil {
			t.Fatal(err)
		}
	}
	st := l.Stats()
	if w := st.MarkWrites - opened; w == 0 || w > 3 {
		t.Errorf("%d mark writes for %d commits of 10,000 seqs, want 1 to 3", w, st.Commits)
	}
	var m seqMark
	if err := readChecked(fsys, nil, path.Join("/s", markFile), &m); err != nil {
		t.Fatal(err)
	}
	if m.Reserved < 10000 {
		t.Errorf("mark %+v does not cover seq 10000", m)
	}
}
