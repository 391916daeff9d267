package jetlog

import (
	"encoding/binary"
	"hash/crc32"
)

// Record kinds. Part of the disk format: never renumber.
const (
	kindMsg    byte = 1 // a stored message
	kindDelete byte = 2 // a tombstone: removes earlier messages
)

// Record layout sizes. Part of the disk format (see doc.go).
const (
	frameSize   = 8                 // length u32 + crc u32
	bodyFixed   = 1 + 8 + 8 + 2 + 4 // kind, seq, ts, subject len, header len
	recordFixed = frameSize + bodyFixed
	// maxBody bounds a record body so a damaged length cannot make recovery
	// allocate or skip absurdly.
	maxBody = 64 << 20
	// maxSubject is the longest subject a record can hold.
	maxSubject = 1<<16 - 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is a decoded record. Its slices alias the buffer it was decoded
// from.
type record struct {
	kind    byte
	seq     uint64
	ts      int64
	subject []byte
	hdr     []byte
	payload []byte
	// compressed: payload is s2-encoded (see compress.go).
	compressed bool
	// more: the record is part of an atomic batch whose later records
	// follow in the same write (see batchFlag).
	more bool
}

// compressedFlag, the top bit of a message record's header length, says
// its payload is s2-encoded. A header block is at most maxBody long, so
// the bit is free in every record ever written. Part of the disk format.
const compressedFlag = 1 << 31

// batchFlag, the next bit of a message record's header length, marks
// every record of an atomic batch (AppendAtomic) but its last: more of
// the batch follows in the same write. A segment that ends inside such a
// run lost the rest of the batch to a crash, and recovery drops the run
// whole (scanSegment), so a batch is never half-recovered. Part of the
// disk format.
const batchFlag = 1 << 30

// recordFlags are the flag bits of a message record's header length.
const recordFlags = compressedFlag | batchFlag

// recordSize is the encoded size of a message record.
func recordSize(subject string, hdr, payload []byte) int {
	return recordFixed + len(subject) + len(hdr) + len(payload)
}

// appendRecord encodes a record at the end of dst and returns the extended
// slice. It does not allocate when dst has room. The caller has checked the
// sizes (see recordSize, maxBody, maxSubject).
// see BenchmarkAppend
func appendRecord(dst []byte, kind byte, seq uint64, ts int64, subject string, hdr, payload []byte) []byte {
	return appendRecordFlags(dst, kind, seq, ts, subject, hdr, payload, 0)
}

// appendRecordFlags is appendRecord for a message record with flags
// (compressedFlag, batchFlag) set in its header length.
func appendRecordFlags(dst []byte, kind byte, seq uint64, ts int64, subject string, hdr, payload []byte, flags uint32) []byte {
	start := len(dst)
	bodyLen := bodyFixed + len(subject) + len(hdr) + len(payload)
	dst = append(dst, make([]byte, recordFixed)...)
	b := dst[start:]
	binary.LittleEndian.PutUint32(b[0:], uint32(bodyLen))
	b[8] = kind
	binary.LittleEndian.PutUint64(b[9:], seq)
	binary.LittleEndian.PutUint64(b[17:], uint64(ts))
	binary.LittleEndian.PutUint16(b[25:], uint16(len(subject)))
	hl := uint32(len(hdr)) | flags
	binary.LittleEndian.PutUint32(b[27:], hl)
	dst = append(dst, subject...)
	dst = append(dst, hdr...)
	dst = append(dst, payload...)
	b = dst[start:]
	crc := crc32.Update(0, castagnoli, b[0:4])
	crc = crc32.Update(crc, castagnoli, b[frameSize:])
	binary.LittleEndian.PutUint32(b[4:], crc)
	return dst
}

// frameLen reads the body length from a frame header and reports whether it
// is plausible. The whole record is frameSize+bodyLen bytes.
func frameLen(frame []byte) (int, bool) {
	n := binary.LittleEndian.Uint32(frame[0:4])
	return int(n), n >= bodyFixed && n <= maxBody
}

// decodeRecord checks the CRC and decodes one whole record (frame
// included). It returns a reason string on failure, never panics.
func decodeRecord(b []byte) (record, string) {
	if len(b) < recordFixed {
		return record{}, "short record"
	}
	n, ok := frameLen(b)
	if !ok {
		return record{}, "implausible length"
	}
	if len(b) != frameSize+n {
		return record{}, "length mismatch"
	}
	crc := crc32.Update(0, castagnoli, b[0:4])
	crc = crc32.Update(crc, castagnoli, b[frameSize:])
	if crc != binary.LittleEndian.Uint32(b[4:8]) {
		return record{}, "crc mismatch"
	}
	return decodeBody(b[frameSize:])
}

// decodeBody decodes a record's body (what follows the frame: plain, or
// opened by a sealer).
func decodeBody(b []byte) (record, string) {
	if len(b) < bodyFixed {
		return record{}, "short record"
	}
	r := record{
		kind: b[0],
		seq:  binary.LittleEndian.Uint64(b[1:]),
		ts:   int64(binary.LittleEndian.Uint64(b[9:])),
	}
	sl := int(binary.LittleEndian.Uint16(b[17:]))
	rawHL := binary.LittleEndian.Uint32(b[19:])
	r.compressed = rawHL&compressedFlag != 0 && r.kind == kindMsg
	r.more = rawHL&batchFlag != 0 && r.kind == kindMsg
	hl := int(rawHL &^ recordFlags)
	rest := b[bodyFixed:]
	if sl+hl > len(rest) || hl < 0 {
		return record{}, "field lengths beyond record"
	}
	r.subject = rest[:sl]
	r.hdr = rest[sl : sl+hl]
	r.payload = rest[sl+hl:]
	return r, ""
}

// appendTombstone encodes the payload of a delete record: every seq below
// floor is removed (0: none), plus the listed seqs (ascending).
func appendTombstone(dst []byte, floor uint64, seqs []uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, floor)
	var prev uint64
	for _, s := range seqs {
		dst = binary.AppendUvarint(dst, s-prev)
		prev = s
	}
	return dst
}

// decodeTombstone is the inverse of appendTombstone. It calls fn for each
// listed seq and returns the floor, or false if the payload is malformed.
func decodeTombstone(p []byte, fn func(seq uint64)) (uint64, bool) {
	if len(p) < 8 {
		return 0, false
	}
	floor := binary.LittleEndian.Uint64(p)
	p = p[8:]
	var prev uint64
	for len(p) > 0 {
		d, n := binary.Uvarint(p)
		if n <= 0 {
			return floor, false
		}
		prev += d
		fn(prev)
		p = p[n:]
	}
	return floor, true
}
