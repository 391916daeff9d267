package jetlog

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"slices"
)

// A segment's index file is decoded front to back (its entries are
// deltas), so finding one entry in a segment of 600,000 small messages
// means decoding them all (about 12 MB). The block directory, a sidecar
// <id>.blk beside <id>.idx, says where every idxBlockEntries-th entry
// starts in the index file and what the deltas and subject table are
// there, so a lookup by seq reads and decodes one block of the index
// (BenchmarkManySubjectsRead: sparse-reads).
//
// The directory is a cache, never the truth: it is written after its
// index (without a sync), names the index's checksum, and is used only
// when its own checksum holds and the index file's trailer carries that
// checksum; the entries it leads to are checked against the record they
// point at (sparseBatch). A missing, stale or damaged directory means the
// whole index is read, as without one. Part of the disk format (doc.go):
//
//	"JLBK" | version u8 | index crc u32 | entries end u64 | blocks uvarint |
//	per block: offset uvarint | first seq uvarint | prev seq uvarint |
//	           prev ts varint | prev end varint | table len uvarint |
//	subjects uvarint | per subject: len uvarint | subject | crc32c u32
const (
	blkMagic        = "JLBK"
	blkVersion      = 1
	blkSuffix       = ".blk"
	idxBlockEntries = 1024 // entries per block; part of the format
)

// indexBlock is where one block of a version 2 index starts: the byte
// offset of its first entry in the file, that entry's seq, the entry
// before it (the deltas' base) and the subject table's length there.
type indexBlock struct {
	off   int
	first uint64
	prev  indexPrev
	table int
}

// blockDir is a decoded block directory.
type blockDir struct {
	idxCRC     uint32
	entriesEnd int // where the last block ends in the index file
	blocks     []indexBlock
	subjects   [][]byte // the index's subject table
}

func blkName(id uint64) string { return idxName(id)[:len(idxName(id))-len(idxSuffix)] + blkSuffix }

// encodeBlockDir is the sidecar of the index file idx, whose blocks and
// subject table the builder that wrote it kept.
func encodeBlockDir(idx []byte, blocks []indexBlock, subjects []string) []byte {
	out := append([]byte(blkMagic), blkVersion)
	out = binary.LittleEndian.AppendUint32(out, binary.LittleEndian.Uint32(idx[len(idx)-4:]))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(idx)-idxTrailer))
	out = binary.AppendUvarint(out, uint64(len(blocks)))
	for _, b := range blocks {
		out = binary.AppendUvarint(out, uint64(b.off))
		out = binary.AppendUvarint(out, b.first)
		out = binary.AppendUvarint(out, b.prev.seq)
		out = binary.AppendVarint(out, b.prev.ts)
		out = binary.AppendVarint(out, b.prev.end)
		out = binary.AppendUvarint(out, uint64(b.table))
	}
	out = binary.AppendUvarint(out, uint64(len(subjects)))
	for _, s := range subjects {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
}

// decodeBlockDir parses a sidecar; false for any damage.
func decodeBlockDir(b []byte) (blockDir, bool) {
	var dir blockDir
	head := len(blkMagic) + 1 + 4 + 8
	if len(b) < head+4 || string(b[:len(blkMagic)]) != blkMagic || b[len(blkMagic)] != blkVersion ||
		crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return dir, false
	}
	dir.idxCRC = binary.LittleEndian.Uint32(b[len(blkMagic)+1:])
	dir.entriesEnd = int(binary.LittleEndian.Uint64(b[len(blkMagic)+5:]))
	d := indexDecoder{p: b[head : len(b)-4]}
	n := d.uvarint()
	if n > uint64(len(d.p)) {
		return dir, false
	}
	dir.blocks = make([]indexBlock, n)
	for i := range dir.blocks {
		dir.blocks[i] = indexBlock{off: int(d.uvarint()), first: d.uvarint(),
			prev: indexPrev{seq: d.uvarint(), ts: d.varint(), end: d.varint()}, table: int(d.uvarint())}
	}
	k := d.uvarint()
	if k > uint64(len(d.p)) {
		return dir, false
	}
	dir.subjects = make([][]byte, k)
	for i := range dir.subjects {
		dir.subjects[i] = d.bytes(d.uvarint())
	}
	if d.bad || len(d.p) != 0 {
		return dir, false
	}
	for i, blk := range dir.blocks {
		if blk.off < len(idxMagic)+1 || blk.off > dir.entriesEnd || blk.table > len(dir.subjects) ||
			i > 0 && (blk.off <= dir.blocks[i-1].off || blk.first <= dir.blocks[i-1].first) {
			return dir, false
		}
	}
	return dir, true
}

// writeBlockDir writes the sidecar of seg's index file idx (plaintext
// stores only: a sealed index cannot be read in part). A failure only
// costs later lookups the whole index, so it is logged, not returned.
func (l *Log) writeBlockDir(seg *segment, idx []byte, blocks []indexBlock, subjects []string) {
	if l.seal != nil || l.memory || len(blocks) == 0 {
		return
	}
	name := segPath(l.dir, blkName(seg.id))
	if err := writeFileAtomic(l.fs, name, encodeBlockDir(idx, blocks, subjects)); err != nil {
		l.opts.Logger.Warn("jetlog: write block directory", "dir", l.dir, "segment", seg.name, "err", err)
	}
}

// readBlockDir returns seg's block directory if it describes the index
// file as it is now (indexed bytes of the segment).
func (l *Log) readBlockDir(seg *segment, indexed int64) (blockDir, bool) {
	if l.seal != nil {
		return blockDir{}, false
	}
	data, err := readAll(l.fs, segPath(l.dir, blkName(seg.id)))
	if err != nil {
		return blockDir{}, false
	}
	dir, ok := decodeBlockDir(data)
	if !ok {
		return blockDir{}, false
	}
	var trailer [idxTrailer]byte
	if !l.readIndexAt(seg, trailer[:], int64(dir.entriesEnd)) ||
		int64(binary.LittleEndian.Uint64(trailer[:])) != indexed ||
		binary.LittleEndian.Uint32(trailer[12:]) != dir.idxCRC {
		return blockDir{}, false
	}
	return dir, true
}

// readIndexAt reads len(p) bytes of seg's index file at off.
func (l *Log) readIndexAt(seg *segment, p []byte, off int64) bool {
	f, err := l.fs.OpenFile(segPath(l.dir, idxName(seg.id)), os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close() //nolint:errcheck // read-only
	n, _ := f.ReadAt(p, off)
	return n == len(p)
}

// blockEntries fills in want (ascending seqs) from the blocks of dir that
// hold them, reading only those blocks of seg's index; false when an
// entry is not where the directory says, or a read fails.
func (l *Log) blockEntries(seg *segment, dir blockDir, want []sparseWant) bool {
	for k := 0; k < len(want); {
		i, found := slices.BinarySearchFunc(dir.blocks, want[k].seq, func(b indexBlock, seq uint64) int {
			switch {
			case b.first < seq:
				return -1
			case b.first > seq:
				return 1
			}
			return 0
		})
		if !found {
			i-- // the block before the first that starts after seq
		}
		if i < 0 {
			return false
		}
		blk, end := dir.blocks[i], dir.entriesEnd
		if i+1 < len(dir.blocks) {
			end = dir.blocks[i+1].off
		}
		data := make([]byte, end-blk.off)
		if !l.readIndexAt(seg, data, int64(blk.off)) {
			return false
		}
		table := slices.Clone(dir.subjects[:blk.table])
		start := k
		ok := walkBlock(data, blk, table, func(e *entry) {
			if k < len(want) && e.kind == kindMsg && e.seq == want[k].seq {
				want[k].off, want[k].size = e.off, e.size
				k++
			}
		})
		if !ok || k == start {
			return false // the block does not hold the seq it should
		}
	}
	return true
}

// walkBlock decodes the entries of one block (data, from the block's
// offset to the next block's) as walkEntries does the whole file.
func walkBlock(data []byte, blk indexBlock, table [][]byte, visit func(e *entry)) bool {
	d := indexDecoder{p: data}
	e := entry{seq: blk.prev.seq, ts: blk.prev.ts, off: blk.prev.end}
	for len(d.p) > 0 {
		var ok bool
		if e, ok = d.entry(e, &table); !ok {
			return false
		}
		visit(&e)
	}
	return true
}

// indexBlocks appends to out the block directory of a version 2 index
// file that checkIndex and walkEntries accepted (what a resumed builder
// continues).
func indexBlocks(data []byte, out []indexBlock) []indexBlock {
	body := data[:len(data)-idxTrailer]
	d := indexDecoder{p: body[len(idxMagic)+1:]}
	var prev indexPrev
	names := 0
	for n := 0; len(d.p) > 0; n++ {
		off := len(body) - len(d.p)
		kind := d.byte()
		seq := prev.seq + uint64(d.varint())
		ts := prev.ts + d.varint()
		start := prev.end + d.varint()
		size := d.uvarint()
		if n%idxBlockEntries == 0 {
			out = append(out, indexBlock{off: off, first: seq, prev: prev, table: names})
		}
		if ref := d.uvarint(); ref == idxSubjectLiteral || ref == idxSubjectNew {
			d.bytes(d.uvarint())
			if ref == idxSubjectNew {
				names++
			}
		}
		if kind == kindDelete {
			d.bytes(d.uvarint())
		}
		prev = indexPrev{seq: seq, ts: ts, end: start + int64(size)}
	}
	return out
}
