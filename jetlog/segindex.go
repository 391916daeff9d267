package jetlog

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"strings"
)

// The index file of a segment lists its records without headers and
// payloads (tombstones keep their payload), so a restart can rebuild the
// in-memory catalog without reading the segment. Part of the disk format
// (see doc.go): version 1 entries are fixed-width, version 2 entries
// (written since issue #30) are deltas from the entry before, with the
// subjects of the segment in a table, a few bytes an entry instead of 31
// plus the subject. Both are read.
const (
	idxMagic    = "JLIX"
	idxVersion1 = 1
	idxVersion  = 2         // what indexBuilder writes
	idxTrailer  = 8 + 4 + 4 // segment size, entry count, crc
)

// Subject references of a version 2 entry (see doc.go). Part of the disk
// format.
const (
	idxSubjectLiteral = 0 // a subject follows, not added to the table
	idxSubjectNew     = 1 // a subject follows and is added to the table
	idxSubjectRefBase = 2 // ref-2 indexes the table
)

// maxIndexSubjects bounds the subject table of one index, so that a
// segment of distinct subjects costs the builder no memory per message;
// past it subjects are written as literals.
const maxIndexSubjects = 1024

// entry is one record as listed in an index file or found by a scan.
type entry struct {
	kind    byte
	seq     uint64
	ts      int64
	off     int64
	size    uint32
	subject []byte // aliases the buffer it was decoded from
	tomb    []byte // tombstone payload; aliases too
}

// indexBuilder accumulates the index of the active segment as its records
// are written. Zero value is ready; see BenchmarkAppend.
type indexBuilder struct {
	buf   []byte
	count uint32
	prev  indexPrev
	// The subject table: ids (1-based) by name, and the names in id order
	// (truncate removes the ones added after a mark).
	ids   map[string]uint32
	names []string
	// blocks is the block directory of what is built so far (segblocks.go).
	blocks []indexBlock
}

// indexPrev is what a version 2 entry is a delta from.
type indexPrev struct {
	seq uint64
	ts  int64
	end int64 // the previous record's offset + size
}

func (b *indexBuilder) reset() {
	b.buf = append(b.buf[:0], idxMagic...)
	b.buf = append(b.buf, idxVersion)
	b.count = 0
	b.prev = indexPrev{}
	clear(b.ids)
	b.names = b.names[:0]
	b.blocks = b.blocks[:0]
}

// see BenchmarkAppend: no allocation but for a new subject in the table.
func (b *indexBuilder) add(kind byte, seq uint64, ts, off int64, size int, subject string, tomb []byte) {
	if len(b.buf) == 0 {
		b.reset()
	}
	if b.count%idxBlockEntries == 0 {
		b.blocks = append(b.blocks, indexBlock{off: len(b.buf), first: seq, prev: b.prev, table: len(b.names)})
	}
	b.buf = append(b.buf, kind)
	b.buf = binary.AppendVarint(b.buf, int64(seq-b.prev.seq))
	b.buf = binary.AppendVarint(b.buf, ts-b.prev.ts)
	b.buf = binary.AppendVarint(b.buf, off-b.prev.end)
	b.buf = binary.AppendUvarint(b.buf, uint64(size))
	switch id, ok := b.ids[subject]; {
	case ok:
		b.buf = binary.AppendUvarint(b.buf, uint64(id)-1+idxSubjectRefBase)
	case len(b.names) < maxIndexSubjects:
		if b.ids == nil {
			b.ids = map[string]uint32{}
		}
		name := strings.Clone(subject) // the caller's memory is not ours to keep
		b.names = append(b.names, name)
		b.ids[name] = uint32(len(b.names))
		b.buf = binary.AppendUvarint(b.buf, idxSubjectNew)
		b.buf = binary.AppendUvarint(b.buf, uint64(len(subject)))
		b.buf = append(b.buf, subject...)
	default:
		b.buf = binary.AppendUvarint(b.buf, idxSubjectLiteral)
		b.buf = binary.AppendUvarint(b.buf, uint64(len(subject)))
		b.buf = append(b.buf, subject...)
	}
	if kind == kindDelete {
		b.buf = binary.AppendUvarint(b.buf, uint64(len(tomb)))
		b.buf = append(b.buf, tomb...)
	}
	b.prev = indexPrev{seq: seq, ts: ts, end: off + int64(size)}
	b.count++
}

// resume continues the index file data of the active segment, which
// checkIndex accepted. A version 2 file is continued in place (the
// builder takes data over); a version 1 file is rewritten as version 2.
func (b *indexBuilder) resume(data []byte, count uint32) {
	segSize, _, _ := checkIndex(data)
	if data[len(idxMagic)] == idxVersion1 {
		b.reset()
		walkEntries(data, segSize, count, func(e *entry) {
			b.add(e.kind, e.seq, e.ts, e.off, int(e.size), string(e.subject), e.tomb)
		})
		return
	}
	b.reset()
	walkEntries(data, segSize, count, func(e *entry) {
		b.prev = indexPrev{seq: e.seq, ts: e.ts, end: e.off + int64(e.size)}
	})
	b.blocks = indexBlocks(data, b.blocks)
	b.names, b.ids = indexSubjects(data, segSize, count, b.names), map[string]uint32{}
	for i, name := range b.names {
		b.ids[name] = uint32(i + 1)
	}
	b.buf = data[:len(data)-idxTrailer]
	b.count = count
}

// truncate drops the entries added after mark (see mark).
func (b *indexBuilder) truncate(m indexMark) {
	b.buf = b.buf[:m.n]
	b.count = m.count
	b.prev = m.prev
	for _, name := range b.names[m.subjects:] {
		delete(b.ids, name)
	}
	b.names = b.names[:m.subjects]
	b.blocks = b.blocks[:min(len(b.blocks), int((m.count+idxBlockEntries-1)/idxBlockEntries))]
}

type indexMark struct {
	n        int
	count    uint32
	prev     indexPrev
	subjects int
}

func (b *indexBuilder) mark() indexMark {
	if len(b.buf) == 0 {
		b.reset()
	}
	return indexMark{len(b.buf), b.count, b.prev, len(b.names)}
}

// finish returns the complete index file for a segment of segSize bytes.
// The result aliases the builder's buffer until the next add or reset.
func (b *indexBuilder) finish(segSize int64) []byte {
	if len(b.buf) == 0 {
		b.reset()
	}
	out := binary.LittleEndian.AppendUint64(b.buf, uint64(segSize))
	out = binary.LittleEndian.AppendUint32(out, b.count)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	return out
}

// rebuildIndex writes the index file of seg from entries found by reading
// the segment, describing its first segSize bytes.
func (l *Log) rebuildIndex(seg *segment, entries []entry, segSize int64) error {
	var b indexBuilder
	for _, e := range entries {
		b.add(e.kind, e.seq, e.ts, e.off, int(e.size), string(e.subject), e.tomb)
	}
	name := segPath(l.dir, idxName(seg.id))
	plain := b.finish(segSize)
	if err := writeFileAtomic(l.fs, name, l.seal.sealFile(plain, name)); err != nil {
		return err
	}
	l.writeBlockDir(seg, plain, b.blocks, b.names)
	return nil
}

// decodeIndex parses an index file. It returns false for any damage, in
// which case the segment is scanned instead.
func decodeIndex(b []byte) (segSize int64, entries []entry, ok bool) {
	_, count, ok := checkIndex(b)
	if !ok {
		return 0, nil, false
	}
	entries = make([]entry, 0, min(int(count), len(b)/6+1))
	segSize, ok = walkIndex(b, func(e *entry) { entries = append(entries, *e) })
	if !ok {
		return 0, nil, false
	}
	return segSize, entries, true
}

// walkIndex checks an index file and calls visit with each entry in
// order; the entry (whose subject and tombstone alias b) is reused
// between calls. On damage it returns false, possibly after visiting some
// entries: walk once with a no-op visit to validate first when that
// matters.
func walkIndex(b []byte, visit func(e *entry)) (segSize int64, ok bool) {
	segSize, count, ok := checkIndex(b)
	if !ok {
		return 0, false
	}
	return segSize, walkEntries(b, segSize, count, visit)
}

// walkEntries is walkIndex after checkIndex accepted b.
func walkEntries(b []byte, segSize int64, count uint32, visit func(e *entry)) bool {
	p := b[len(idxMagic)+1 : len(b)-idxTrailer]
	if b[len(idxMagic)] == idxVersion1 {
		return walkEntriesV1(p, segSize, count, visit)
	}
	var table [][]byte // aliases b
	var d indexDecoder
	d.p = p
	var e entry
	n := uint32(0)
	for len(d.p) > 0 {
		var ok bool
		if e, ok = d.entry(e, &table); !ok || e.off+int64(e.size) > segSize {
			return false
		}
		visit(&e)
		n++
	}
	return n == count
}

// entry decodes the next version 2 entry, whose deltas are from prev,
// adding a new subject to table. It reports false for an entry no index
// bus writes can hold.
func (d *indexDecoder) entry(prev entry, table *[][]byte) (entry, bool) {
	kind := d.byte()
	seq := prev.seq + uint64(d.varint())
	ts := prev.ts + d.varint()
	off := prev.off + int64(prev.size) + d.varint()
	size := d.uvarint()
	e := entry{kind: kind, seq: seq, ts: ts, off: off, size: uint32(size)}
	switch ref := d.uvarint(); {
	case ref == idxSubjectLiteral || ref == idxSubjectNew:
		e.subject = d.bytes(d.uvarint())
		if ref == idxSubjectNew {
			*table = append(*table, e.subject)
		}
	case ref-idxSubjectRefBase < uint64(len(*table)):
		e.subject = (*table)[ref-idxSubjectRefBase]
	default:
		return e, false
	}
	if kind == kindDelete {
		e.tomb = d.bytes(d.uvarint())
	}
	ok := !d.bad && size <= math.MaxUint32 && (kind == kindMsg || kind == kindDelete) && e.off >= 0
	return e, ok
}

// indexSubjects appends the subject table of a version 2 index, which
// walkEntries accepted, to names.
func indexSubjects(b []byte, segSize int64, count uint32, names []string) []string {
	var d indexDecoder
	d.p = b[len(idxMagic)+1 : len(b)-idxTrailer]
	for len(d.p) > 0 {
		kind := d.byte()
		d.varint()
		d.varint()
		d.varint()
		d.uvarint()
		if ref := d.uvarint(); ref == idxSubjectLiteral || ref == idxSubjectNew {
			s := d.bytes(d.uvarint())
			if ref == idxSubjectNew {
				names = append(names, string(s))
			}
		}
		if kind == kindDelete {
			d.bytes(d.uvarint())
		}
	}
	return names
}

// indexDecoder reads the fields of version 2 entries; bad is sticky.
type indexDecoder struct {
	p   []byte
	bad bool
}

func (d *indexDecoder) byte() byte {
	if len(d.p) == 0 {
		d.bad = true
		return 0
	}
	c := d.p[0]
	d.p = d.p[1:]
	return c
}

func (d *indexDecoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.bad, d.p = true, nil
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *indexDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.bad, d.p = true, nil
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *indexDecoder) bytes(n uint64) []byte {
	if n > uint64(len(d.p)) {
		d.bad, d.p = true, nil
		return nil
	}
	out := d.p[:n:n]
	d.p = d.p[n:]
	return out
}

// walkEntriesV1 walks the fixed-width entries of a version 1 index.
func walkEntriesV1(p []byte, segSize int64, count uint32, visit func(e *entry)) bool {
	var e entry
	n := uint32(0)
	for len(p) > 0 {
		if len(p) < 31 {
			return false
		}
		e = entry{
			kind: p[0],
			seq:  binary.LittleEndian.Uint64(p[1:]),
			ts:   int64(binary.LittleEndian.Uint64(p[9:])),
			off:  int64(binary.LittleEndian.Uint64(p[17:])),
			size: binary.LittleEndian.Uint32(p[25:]),
		}
		sl := int(binary.LittleEndian.Uint16(p[29:]))
		p = p[31:]
		if len(p) < sl {
			return false
		}
		e.subject, p = p[:sl], p[sl:]
		if e.kind == kindDelete {
			if len(p) < 4 {
				return false
			}
			tl := int(binary.LittleEndian.Uint32(p))
			p = p[4:]
			if tl < 0 || len(p) < tl {
				return false
			}
			e.tomb, p = p[:tl], p[tl:]
		}
		if e.kind != kindMsg && e.kind != kindDelete || e.off < 0 || e.off+int64(e.size) > segSize {
			return false
		}
		visit(&e)
		n++
	}
	return n == count
}

// checkIndex verifies an index file's framing and checksum without
// decoding its entries.
func checkIndex(b []byte) (segSize int64, count uint32, ok bool) {
	if len(b) < len(idxMagic)+1+idxTrailer || string(b[:len(idxMagic)]) != idxMagic {
		return 0, 0, false
	}
	if v := b[len(idxMagic)]; v != idxVersion1 && v != idxVersion {
		return 0, 0, false
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, 0, false
	}
	t := b[len(b)-idxTrailer:]
	return int64(binary.LittleEndian.Uint64(t)), binary.LittleEndian.Uint32(t[8:]), true
}
