package jetlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path"
	"reflect"
	"testing"
)

// indexEntries is a segment's worth of entries: messages over a few
// subjects (and one of many distinct ones), a gap in the offsets, and
// tombstones.
func indexEntries() []entry {
	var es []entry
	off := int64(0)
	for i := range 300 {
		subj := fmt.Sprintf("orders.%d", i%4)
		if i%50 == 7 {
			subj = fmt.Sprintf("unique.%d", i)
		}
		e := entry{kind: kindMsg, seq: uint64(10 + i), ts: 1_700_000_000_000_000_000 + int64(i)*1500, off: off, size: uint32(40 + i%9), subject: []byte(subj)}
		if i%100 == 99 {
			tomb := appendTombstone(nil, 0, []uint64{uint64(10 + i - 3)})
			es = append(es, e, entry{kind: kindDelete, seq: e.seq, ts: e.ts, off: off + int64(e.size), size: uint32(recordFixed + len(tomb)), subject: []byte{}, tomb: tomb})
			off += int64(e.size) + int64(recordFixed+len(tomb))
			continue
		}
		if i == 150 {
			e.off += 16 // a record the index does not list
		}
		es = append(es, e)
		off = e.off + int64(e.size)
	}
	return es
}

// encodeIndexV1 writes entries as version 1 did, to check that stores
// written before version 2 stay readable.
func encodeIndexV1(es []entry, segSize int64) []byte {
	b := append([]byte(idxMagic), idxVersion1)
	for _, e := range es {
		b = append(b, e.kind)
		b = binary.LittleEndian.AppendUint64(b, e.seq)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.ts))
		b = binary.LittleEndian.AppendUint64(b, uint64(e.off))
		b = binary.LittleEndian.AppendUint32(b, e.size)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(e.subject)))
		b = append(b, e.subject...)
		if e.kind == kindDelete {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(e.tomb)))
			b = append(b, e.tomb...)
		}
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(segSize))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(es)))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func buildIndex(es []entry, segSize int64) []byte {
	var b indexBuilder
	for _, e := range es {
		b.add(e.kind, e.seq, e.ts, e.off, int(e.size), string(e.subject), e.tomb)
	}
	return append([]byte(nil), b.finish(segSize)...)
}

func sameEntries(t *testing.T, what string, got, want []entry) {
	t.Helper()
	norm := func(es []entry) []entry {
		out := make([]entry, len(es))
		for i, e := range es {
			if len(e.subject) == 0 {
				e.subject = nil
			}
			if len(e.tomb) == 0 {
				e.tomb = nil
			}
			out[i] = e
		}
		return out
	}
	if !reflect.DeepEqual(norm(got), norm(want)) {
		t.Fatalf("%s: entries differ:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestIndexFormats(t *testing.T) {
	t.Parallel()
	es := indexEntries()
	last := es[len(es)-1]
	segSize := last.off + int64(last.size)

	encoders := []struct {
		name   string
		encode func([]entry, int64) []byte
	}{{"v1", encodeIndexV1}, {"v2", buildIndex}}
	for _, v := range encoders {
		t.Run("decode_"+v.name, func(t *testing.T) { // v1: stores written before v2 stay readable
			t.Parallel()
			size, got, ok := decodeIndex(v.encode(es, segSize))
			if !ok || size != segSize {
				t.Fatalf("decode: ok %v size %d", ok, size)
			}
			sameEntries(t, v.name, got, es)
		})
	}

	t.Run("version_2_is_smaller", func(t *testing.T) {
		t.Parallel()
		v1, v2 := len(encodeIndexV1(es, segSize)), len(buildIndex(es, segSize))
		if v2*3 > v1 {
			t.Fatalf("v2 %d bytes, v1 %d: want under a third", v2, v1)
		}
		t.Logf("%d entries: v1 %d bytes, v2 %d bytes", len(es), v1, v2)
	})

	// The active segment's index is resumed after a clean restart and
	// grows on: from either version, the result lists every entry.
	for _, v := range encoders {
		t.Run("resume_"+v.name, func(t *testing.T) {
			t.Parallel()
			half := es[:len(es)/2]
			h := half[len(half)-1]
			data := v.encode(half, h.off+int64(h.size))
			_, count, ok := checkIndex(data)
			if !ok {
				t.Fatal("checkIndex refused")
			}
			var b indexBuilder
			b.resume(data, count)
			for _, e := range es[len(half):] {
				b.add(e.kind, e.seq, e.ts, e.off, int(e.size), string(e.subject), e.tomb)
			}
			size, got, ok := decodeIndex(b.finish(segSize))
			if !ok || size != segSize {
				t.Fatalf("decode: ok %v size %d", ok, size)
			}
			sameEntries(t, "resumed", got, es)
		})
	}

	t.Run("truncate_forgets_subjects_added_after_the_mark", func(t *testing.T) {
		t.Parallel()
		var b indexBuilder
		b.add(kindMsg, 1, 10, 0, 40, "a", nil)
		m := b.mark()
		b.add(kindMsg, 2, 11, 40, 40, "b", nil)
		b.truncate(m)
		b.add(kindMsg, 2, 11, 40, 40, "c", nil)
		b.add(kindMsg, 3, 12, 80, 40, "b", nil)
		_, got, ok := decodeIndex(b.finish(120))
		if !ok {
			t.Fatal("decode refused")
		}
		want := []entry{
			{kind: kindMsg, seq: 1, ts: 10, off: 0, size: 40, subject: []byte("a")},
			{kind: kindMsg, seq: 2, ts: 11, off: 40, size: 40, subject: []byte("c")},
			{kind: kindMsg, seq: 3, ts: 12, off: 80, size: 40, subject: []byte("b")},
		}
		sameEntries(t, "truncated", got, want)
	})
}

// A store whose indexes are version 1 (written before version 2) opens
// from its catalog snapshot, reads every message, appends, and writes
// version 2 from then on.
func TestIndexVersion1StoreOpens(t *testing.T) {
	t.Parallel()
	fx, opts, _ := catalogFixture(t)
	names, err := fx.ReadDir("/s")
	if err != nil {
		t.Fatal(err)
	}
	converted := 0
	for _, name := range names {
		if path.Ext(name) != idxSuffix {
			continue
		}
		data, err := readAll(fx, path.Join("/s", name))
		if err != nil {
			t.Fatal(err)
		}
		size, es, ok := decodeIndex(data)
		if !ok {
			t.Fatalf("%s does not decode", name)
		}
		if err := writeFileAtomic(fx, path.Join("/s", name), encodeIndexV1(es, size)); err != nil {
			t.Fatal(err)
		}
		converted++
	}
	if converted < 2 {
		t.Fatalf("only %d index files", converted)
	}
	l := openLog(t, "/s", StreamConfig{Name: "S"}, opts)
	if !l.Recovery().CatalogRestored {
		t.Fatalf("recovery %+v: want the catalog restored", l.Recovery())
	}
	for seq := uint64(1); seq <= 40; seq++ {
		if seq == 2 || seq == 17 || seq == 18 || seq == 30 { // catalogFixture deleted them
			continue
		}
		if m := mustGet(t, l, seq); m.Subject != fmt.Sprintf("s.%d", (seq-1)%3) {
			t.Fatalf("Get(%d) = %+v", seq, m)
		}
	}
	mustAppend(t, l, "s.new", "after")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, "/s", StreamConfig{Name: "S"}, opts)
	if m := mustGet(t, l, 41); m.Subject != "s.new" {
		t.Fatalf("Get(41) = %+v", m)
	}
}

// FuzzIndexEntries walks arbitrary entry bytes framed as a valid index of
// either version: it must never panic, and every entry it visits must lie
// inside the segment.
func FuzzIndexEntries(f *testing.F) {
	es := indexEntries()[:20]
	last := es[len(es)-1]
	segSize := last.off + int64(last.size)
	v2 := buildIndex(es, segSize)
	f.Add(byte(idxVersion), v2[len(idxMagic)+1:len(v2)-idxTrailer], uint32(len(es)))
	v1 := encodeIndexV1(es, segSize)
	f.Add(byte(idxVersion1), v1[len(idxMagic)+1:len(v1)-idxTrailer], uint32(len(es)))
	f.Add(byte(idxVersion), []byte{kindMsg, 0, 0, 0, 0, 9}, uint32(1))
	f.Fuzz(func(t *testing.T, version byte, body []byte, count uint32) {
		b := append([]byte(idxMagic), version)
		b = append(b, body...)
		b = binary.LittleEndian.AppendUint64(b, uint64(segSize))
		b = binary.LittleEndian.AppendUint32(b, count)
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
		_, entries, ok := decodeIndex(b)
		for _, e := range entries {
			if e.off < 0 || e.off+int64(e.size) > segSize {
				t.Fatalf("entry %+v outside %d bytes", e, segSize)
			}
		}
		if ok && version == idxVersion {
			var ib indexBuilder
			ib.resume(b, count)
			if _, again, ok := decodeIndex(ib.finish(segSize)); !ok || len(again) != len(entries) {
				t.Fatalf("resumed index: ok %v, %d entries, want %d", ok, len(again), len(entries))
			}
		}
	})
}

// BenchmarkIndexAdd measures adding an entry to the active segment's
// index (once per appended message) and reports the bytes an entry of a
// 64-byte message on a repeated subject takes, on disk and in the
// builder's memory.
func BenchmarkIndexAdd(b *testing.B) {
	var ib indexBuilder
	ib.reset()
	ts := int64(1_700_000_000_000_000_000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%(1<<16) == 0 {
			ib.reset() // a segment's worth
		}
		ib.add(kindMsg, uint64(i+1), ts+int64(i/8)*20_000, int64(i%(1<<16))*102, 102, "orders.eu", nil)
	}
	b.StopTimer()
	if ib.count > 0 {
		b.ReportMetric(float64(len(ib.buf)-len(idxMagic)-1)/float64(ib.count), "idx-B/msg")
	}
}
