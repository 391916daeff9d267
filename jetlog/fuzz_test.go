package jetlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// FuzzScanSegment feeds arbitrary bytes to the segment scanner: it must
// never panic, and every entry it returns must lie inside the data and
// decode again.
func FuzzScanSegment(f *testing.F) {
	var seed []byte
	seed = appendRecord(seed, kindMsg, 1, 10, "a.b", []byte("NATS/1.0\r\n\r\n"), []byte("hello"))
	seed = appendRecord(seed, kindMsg, 2, 11, "a.c", nil, nil)
	seed = appendRecord(seed, kindDelete, 2, 12, "", nil, appendTombstone(nil, 2, []uint64{2}))
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := scanSegment(nil, "fuzz.seg", data, 0)
		for _, e := range res.entries {
			if e.off < 0 || e.off+int64(e.size) > int64(len(data)) {
				t.Fatalf("entry %+v outside %d bytes", e, len(data))
			}
			if _, reason := decodeRecord(data[e.off : e.off+int64(e.size)]); reason != "" {
				t.Fatalf("entry %+v does not decode: %s", e, reason)
			}
		}
		if res.tornAt > int64(len(data)) {
			t.Fatalf("torn at %d beyond %d", res.tornAt, len(data))
		}
		// Index and header parsers share the no-panic rule.
		decodeIndex(data)
		msgID(data)
		decodeTombstone(data, func(uint64) {})
	})
}

// catalogFixture is a small clean stream on a MemFS and its catalog.snap.
func catalogFixture(f testing.TB) (*vfs.MemFS, Options, catalogSnapshot) {
	fsys := vfs.NewMemFS()
	opts := Options{FS: fsys, SegmentSize: 512, ExpireEvery: -1}
	l, err := Open("/s", StreamConfig{Name: "S"}, opts)
	if err != nil {
		f.Fatal(err)
	}
	for i := range 40 {
		if _, err := l.Append(Msg{Subject: fmt.Sprintf("s.%d", i%3), Data: []byte("data")}, Expect{}); err != nil {
			f.Fatal(err)
		}
	}
	for _, seq := range []uint64{2, 17, 18, 30} {
		if err := l.Delete(seq); err != nil {
			f.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		f.Fatal(err)
	}
	var snap catalogSnapshot
	if err := readChecked(fsys, nil, "/s/"+catalogFile, &snap); err != nil {
		f.Fatal(err)
	}
	return fsys, opts, snap
}

// openWithSnapshot opens a copy of the fixture whose catalog.snap holds
// body behind a valid checksum (as a buggy writer could leave it). Open
// must not fail or panic, and the log must stay usable.
func openWithSnapshot(t *testing.T, fsys *vfs.MemFS, opts Options, body []byte) {
	clone := fsys.CrashClone(nil)
	data := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli))
	if err := writeFileAtomic(clone, "/s/"+catalogFile, append(data, body...)); err != nil {
		t.Fatal(err)
	}
	opts.FS = clone
	l, err := Open("/s", StreamConfig{Name: "S"}, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer l.Close()
	st := l.State()
	for range l.Messages(0) {
	}
	l.NumPending(st.FirstSeq+1, "s.1")
	l.NumPending(st.FirstSeq+1, "")
	l.Next(st.FirstSeq+1, "s.*")
	l.LastBySubject("s.2")
	l.SeqAtTime(time.Unix(0, 0))
	if _, err := l.Append(Msg{Subject: "s.0", Data: []byte("more")}, Expect{}); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if _, err := l.Purge(PurgeOptions{Subject: "s.1"}); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	evictAll(t, l)
	l.Get(st.FirstSeq)
}

// FuzzCatalogSnapshot feeds arbitrary msgpack to the catalog restore.
func FuzzCatalogSnapshot(f *testing.F) {
	fsys, opts, snap := catalogFixture(f)
	body, err := msgpack.Marshal(snap)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) { openWithSnapshot(t, fsys, opts, body) })
}

// FuzzCatalogSnapshotFields changes one number of a valid catalog.snap,
// which explores snapshots that still decode (and may pass the checks).
func FuzzCatalogSnapshotFields(f *testing.F) {
	fsys, opts, snap := catalogFixture(f)
	for field := range uint8(12) {
		f.Add(field, uint8(0), uint64(1))
	}
	f.Fuzz(func(t *testing.T, field, at uint8, v uint64) {
		s := snap
		s.Segments = slices.Clone(s.Segments)
		s.Subjects.Counts = slices.Clone(s.Subjects.Counts)
		s.Subjects.Firsts = slices.Clone(s.Subjects.Firsts)
		s.Subjects.Lasts = slices.Clone(s.Subjects.Lasts)
		sec := &s.Segments[int(at)%len(s.Segments)]
		sub := int(at) % len(s.Subjects.Names)
		switch field % 12 {
		case 0:
			s.Last = v
		case 1:
			s.Msgs = v
		case 2:
			sec.First = v
		case 3:
			sec.Slots = v
		case 4:
			sec.Live = int(v)
		case 5:
			sec.Size = int64(v)
		case 6:
			sec.Deleted = append(slices.Clone(sec.Deleted), SeqRange{v, v + uint64(at)})
		case 7:
			s.Subjects.Counts[sub] = v
		case 8:
			s.Subjects.Firsts[sub] = v
		case 9:
			s.Subjects.Lasts[sub] = v
		case 10:
			sec.LastTS = int64(v)
		case 11:
			s.TailOff = int64(v)
		}
		body, err := msgpack.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		openWithSnapshot(t, fsys, opts, body)
	})
}
