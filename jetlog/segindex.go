package jetlog

import (
	"encoding/binary"
	"hash/crc32"
)

// The index file of a segment lists its records without headers and
// payloads (tombstones keep their payload), so a restart can rebuild the
// in-memory catalog without reading the segment. Part of the disk format
// (see doc.go).
const (
	idxMagic   = "JLIX"
	idxVersion = 1
	idxTrailer = 8 + 4 + 4 // segment size, entry count, crc
)

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
}

func (b *indexBuilder) reset() {
	b.buf = append(b.buf[:0], idxMagic...)
	b.buf = append(b.buf, idxVersion)
	b.count = 0
}

func (b *indexBuilder) add(kind byte, seq uint64, ts, off int64, size int, subject string, tomb []byte) {
	if len(b.buf) == 0 {
		b.reset()
	}
	b.buf = append(b.buf, kind)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, seq)
	b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(ts))
	b.buf = binary.LittleEndian.AppendUint64(b.buf, uint64(off))
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(size))
	b.buf = binary.LittleEndian.AppendUint16(b.buf, uint16(len(subject)))
	b.buf = append(b.buf, subject...)
	if kind == kindDelete {
		b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(tomb)))
		b.buf = append(b.buf, tomb...)
	}
	b.count++
}

// resume continues the index file data of the active segment, which
// checkIndex accepted. The builder takes data over.
func (b *indexBuilder) resume(data []byte, count uint32) {
	b.buf = data[:len(data)-idxTrailer]
	b.count = count
}

// truncate drops the entries added after mark (see mark).
func (b *indexBuilder) truncate(m indexMark) {
	b.buf = b.buf[:m.n]
	b.count = m.count
}

type indexMark struct {
	n     int
	count uint32
}

func (b *indexBuilder) mark() indexMark {
	if len(b.buf) == 0 {
		b.reset()
	}
	return indexMark{len(b.buf), b.count}
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
	return writeFileAtomic(l.fs, name, l.seal.sealFile(b.finish(segSize), name))
}

// decodeIndex parses an index file. It returns false for any damage, in
// which case the segment is scanned instead.
func decodeIndex(b []byte) (segSize int64, entries []entry, ok bool) {
	_, count, ok := checkIndex(b)
	if !ok {
		return 0, nil, false
	}
	entries = make([]entry, 0, min(int(count), len(b)/31+1))
	segSize, ok = walkIndex(b, func(e *entry) { entries = append(entries, *e) })
	if !ok {
		return 0, nil, false
	}
	return segSize, entries, true
}

// walkIndex checks an index file and calls visit with each entry in
// order, without allocating; the entry (whose subject and tombstone alias
// b) is reused between calls. On damage it returns false, possibly after
// visiting some entries: walk once with a no-op visit to validate first
// when that matters.
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
	if len(b) < len(idxMagic)+1+idxTrailer || string(b[:len(idxMagic)]) != idxMagic || b[len(idxMagic)] != idxVersion {
		return 0, 0, false
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, 0, false
	}
	t := b[len(b)-idxTrailer:]
	return int64(binary.LittleEndian.Uint64(t)), binary.LittleEndian.Uint32(t[8:]), true
}
