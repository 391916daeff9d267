package jetlog

import (
	"fmt"
	"os"
	"path"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// fileLen returns the length of name on fsys.
func fileLen(t *testing.T, fsys FS, name string) int64 {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// appendN appends n messages and returns the bytes of their records.
func appendN(t *testing.T, l *Log, from, n int) int64 {
	t.Helper()
	var size int64
	for i := from; i < from+n; i++ {
		subj, data := fmt.Sprintf("p.%d", i), fmt.Sprintf("payload-%d", i)
		mustAppend(t, l, subj, data)
		size += int64(recordSize(subj, nil, []byte(data)))
	}
	return size
}

func TestPreallocationReservesAheadAndACrashKeepsEveryMessage(t *testing.T) {
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	records := appendN(t, l, 0, 100)
	seg := path.Join("/s", segName(1))
	if got := fileLen(t, fsys, seg); got < minAllocStep {
		t.Fatalf("active segment is %d bytes for %d of records: nothing reserved", got, records)
	}
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileLen(t, fsys, seg); got != records {
		t.Fatalf("after a clean close the segment is %d bytes, want its records' %d", got, records)
	}

	l2 := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: crashed})
	rep := l2.Recovery()
	if rep.TornSegment != "" || rep.TruncatedBytes != 0 || len(rep.Corrupt) > 0 || len(rep.Losses) > 0 {
		t.Fatalf("reserved space was taken for damage: %+v", rep)
	}
	if st := l2.State(); st.Msgs != 100 || st.LastSeq != 100 {
		t.Fatalf("state after the crash: %+v", st)
	}
	if seq := mustAppend(t, l2, "p.new", "after"); seq != 101 {
		t.Fatalf("next seq %d, want 101", seq)
	}
	if m := mustGet(t, l2, 101); string(m.Data) != "after" {
		t.Fatalf("message written into the reserved space reads %q", m.Data)
	}
	if m := mustGet(t, l2, 100); string(m.Data) != "payload-99" {
		t.Fatalf("last message before the crash reads %q", m.Data)
	}
}

func TestPreallocationTornRecordBeforeReservedSpaceIsStillTorn(t *testing.T) {
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	records := appendN(t, l, 0, 10)
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Half a record's frame lands in the reserved space, as a torn write
	// would leave it.
	f, err := crashed.OpenFile(path.Join("/s", segName(1)), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	frame := appendRecord(nil, kindMsg, 11, 1, "p.torn", nil, []byte("lost"))
	if _, err := f.WriteAt(frame[:len(frame)/2], records); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: crashed})
	rep := l2.Recovery()
	if rep.TornSegment != segName(1) || rep.TruncatedBytes == 0 {
		t.Fatalf("a torn record was not reported: %+v", rep)
	}
	if st := l2.State(); st.LastSeq != 10 {
		t.Fatalf("state: %+v", st)
	}
}

func TestPreallocationIsTrimmedWhenASegmentIsSealed(t *testing.T) {
	fsys := vfs.NewMemFS()
	opts := Options{FS: fsys, SegmentSize: 4 << 10}
	l := openLog(t, "/s", StreamConfig{Name: "S"}, opts)
	appendN(t, l, 0, 400)
	st := l.State()
	names, err := fsys.ReadDir("/s")
	if err != nil {
		t.Fatal(err)
	}
	sealed := 0
	for _, name := range names {
		id, ok := parseSegName(name)
		if !ok || id == l.active().id {
			continue
		}
		sealed++
		if got := fileLen(t, fsys, path.Join("/s", name)); got > opts.SegmentSize+256 {
			t.Fatalf("sealed segment %s is %d bytes: its reserved space was kept", name, got)
		}
	}
	if sealed == 0 {
		t.Fatalf("no segment was sealed (%+v)", st)
	}
}

func TestPreallocationInASealedSegmentIsTrimmedAtOpen(t *testing.T) {
	fsys := vfs.NewMemFS()
	opts := Options{FS: fsys, SegmentSize: 4 << 10}
	l, err := Open("/s", StreamConfig{Name: "S"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 0, 200)
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A crash between sealing and its trim becoming durable: zeros after
	// the first segment's records, and no index for it.
	first := path.Join("/s", segName(1))
	size := fileLen(t, crashed, first)
	truncateFile(t, crashed, first, size+minAllocStep)
	if err := crashed.Remove(path.Join("/s", idxName(1))); err != nil {
		t.Fatal(err)
	}
	l2 := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: crashed, SegmentSize: 4 << 10})
	rep := l2.Recovery()
	if len(rep.Corrupt) > 0 || len(rep.Losses) > 0 || rep.TornSegment != "" {
		t.Fatalf("reserved space in a sealed segment was taken for damage: %+v", rep)
	}
	if got := fileLen(t, crashed, first); got != size {
		t.Fatalf("sealed segment is %d bytes after open, want %d", got, size)
	}
	if st := l2.State(); st.Msgs != 200 {
		t.Fatalf("state: %+v", st)
	}
}
