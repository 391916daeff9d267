package jetlog

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// replayer loads segments in order.
type replayer struct {
	l       *Log
	lastSeq uint64 // highest seq seen in any record
	seen    bool   // any record seen
	durable uint64 // the durable mark read from seq.mark (0 without one)
	// missing names the segment files missing just before the one being
	// loaded ("" when none), the cause of a gap in its seqs; damaged the
	// last segment found damaged, the cause otherwise.
	missing, damaged string
	// The first record replayed: leadEnd is the seq just below the first
	// message, or the last seq its leading tombstone carries, and
	// leadFloor that tombstone's floor: what the segments before it held
	// was in leadFloor..leadEnd.
	leadEnd, leadFloor uint64
}

// gap records seqs missing between two records.
func (rp *replayer) gap(r SeqRange, seg *segment) {
	switch {
	case rp.missing != "":
		rp.l.lose(r, rp.missing, "segment missing", rp.durable)
	case rp.damaged != "":
		rp.l.lose(r, rp.damaged, "corrupt record", rp.durable)
	default:
		rp.l.lose(r, seg.name, "corrupt record", rp.durable)
	}
}

// torn records the messages of a torn tail. At or below the durable mark
// they had been synced, so acknowledged. Above it, in DurabilityAlways,
// they belong to a commit whose fsync never finished (a synced record
// cannot be torn by a crash), so their publishers got no ack; in the
// other modes an append is acknowledged before its sync, so they may
// have been.
func (rp *replayer) torn(r SeqRange, segment string) {
	l := rp.l
	if r.First <= rp.durable || l.durability() != DurabilityAlways {
		l.lose(r, segment, "torn tail", rp.durable)
		return
	}
	l.addLoss(Loss{SeqRange: r, Segment: segment, Reason: "torn tail", Acked: LossNotAcked})
}

// tornSeqs returns the seqs of the messages whose records start in a torn
// tail, read from their headers (which the checksum no longer vouches
// for, so only seqs counting up from lastGood+1 are believed). A tail too
// short to show the kind of its first record counts as one message. A
// sealed record's header cannot be read without its whole record, so in
// a sealed segment each frame in the tail counts as one message.
func tornSeqs(s *sealer, tail []byte, lastGood uint64) (SeqRange, bool) {
	if s != nil {
		return tornFrames(tail, lastGood)
	}
	r := SeqRange{First: lastGood + 1, Last: lastGood}
	for pos := 0; pos < len(tail); {
		rest := tail[pos:]
		if len(rest) < 9 {
			if pos == 0 {
				r.Last = r.First
			}
			break
		}
		kind := rest[8]
		if kind != kindMsg && kind != kindDelete {
			break
		}
		if kind == kindMsg {
			if len(rest) < 17 {
				r.Last++
				break
			}
			if binary.LittleEndian.Uint64(rest[9:]) != r.Last+1 {
				break
			}
			r.Last++
		}
		n, ok := frameLen(rest)
		if !ok {
			break
		}
		pos += frameSize + n
	}
	return r, r.Last >= r.First
}

func (rp *replayer) loadSegment(id uint64, last, trustIndex bool) error {
	l := rp.l
	name := segName(id)
	f, err := l.openSegmentFile(name)
	if err != nil {
		return fmt.Errorf("jetlog: open segment %s: %w", name, err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close() // already failing
		return fmt.Errorf("jetlog: stat segment %s: %w", name, err)
	}
	size := st.Size()
	seg := newSegment(id, f, size)
	seg.sealed.Store(!last)
	l.cat.appendSegment(seg)

	var entries []entry
	indexed := false
	if trustIndex || !last {
		if data, err := readSealed(l.fs, l.seal, segPath(l.dir, idxName(id))); err == nil {
			if segSize, es, ok := decodeIndex(data); ok && segSize == size {
				entries, indexed = es, true
			}
		}
	}
	if indexed && last && !tailIntact(l.seal, f, entries, size) {
		indexed = false // the tail does not match its index: read it all
	}
	if indexed {
		seg.indexed = size
	}
	if !indexed {
		l.report.Scanned++
		data := make([]byte, size)
		if n, err := f.ReadAt(data, 0); n != len(data) {
			return fmt.Errorf("jetlog: read segment %s: %w", name, err)
		}
		sc := scanSegment(l.seal, name, data, rp.lastSeq)
		entries = sc.entries
		if sc.tornAt >= 0 && reservedTail(data[sc.tornAt:]) {
			seg.size, seg.alloc, sc.tornAt = sc.tornAt, size, -1
			if !last { // sealed before its trim was durable
				if err := l.trimAllocation(seg); err != nil {
					l.report.Problems = append(l.report.Problems, err.Error())
				}
			}
		}
		l.report.Corrupt = append(l.report.Corrupt, sc.corrupt...)
		if len(sc.corrupt) > 0 || (sc.tornAt >= 0 && !last) {
			rp.damaged = name // the cause of the gaps found from here on
		}
		if sc.tornAt >= 0 {
			if last {
				if err := f.Truncate(sc.tornAt); err != nil {
					return fmt.Errorf("jetlog: truncate torn tail of %s: %w", name, err)
				}
				if err := f.Sync(); err != nil {
					return fmt.Errorf("jetlog: sync %s: %w", name, err)
				}
				l.report.TornSegment = name
				l.report.TruncatedBytes = size - sc.tornAt
				seg.size = sc.tornAt
				lastGood := rp.lastSeq
				for _, e := range sc.entries {
					lastGood = max(lastGood, e.seq)
				}
				if r, ok := tornSeqs(l.seal, data[sc.tornAt:], lastGood); ok {
					rp.torn(r, name)
				}
			} else {
				l.report.Corrupt = append(l.report.Corrupt, &CorruptError{Segment: name, Offset: sc.tornAt, Reason: "damaged tail of a sealed segment"})
			}
		}
	}
	if last {
		l.ap.idx.reset()
	}
	// Grow the section once rather than doubling per message.
	seg.metas = slices.Grow(seg.metas, len(entries))
	for _, e := range entries {
		rp.apply(seg, e)
		if last {
			l.ap.idx.add(e.kind, e.seq, e.ts, e.off, int(e.size), string(e.subject), e.tomb)
		}
	}
	if !indexed && !last {
		if err := l.rebuildIndex(seg, entries, seg.size); err != nil {
			l.report.Problems = append(l.report.Problems, fmt.Sprintf("rebuild index of %s: %v", name, err))
		} else {
			l.report.RebuiltIndexes = append(l.report.RebuiltIndexes, idxName(id))
			seg.indexed = seg.size
		}
	}
	return nil
}

// tailCheckBytes is how much of the active segment's end Open verifies
// even after a clean shutdown.
const tailCheckBytes = 64 << 10

// recordsFrom verifies that the bytes of f from off to size are whole,
// intact records. It also returns the first record boundary within the
// last tailCheckBytes, where the next check can start.
func recordsFrom(s *sealer, f vfs.File, off, size int64) (int64, bool) {
	buf := make([]byte, size-off)
	if n, _ := f.ReadAt(buf, off); n != len(buf) {
		return 0, false
	}
	tail := off
	for pos := 0; pos < len(buf); {
		if off+int64(pos) <= size-tailCheckBytes {
			tail = off + int64(pos)
		}
		_, n, reason := recordAt(s, buf, pos, 0, false)
		if reason != "" {
			return 0, false
		}
		pos += n
	}
	return tail, true
}

// tailIntact verifies the checksums of the records in the last
// tailCheckBytes of a segment against its index entries.
func tailIntact(s *sealer, f vfs.File, entries []entry, size int64) bool {
	i := len(entries)
	for i > 0 && size-entries[i-1].off <= tailCheckBytes {
		i--
	}
	if i == len(entries) {
		return i == 0 || entries[i-1].off+int64(entries[i-1].size) == size
	}
	start := entries[i].off
	buf := make([]byte, size-start)
	if n, _ := f.ReadAt(buf, start); n != len(buf) {
		return false
	}
	for _, e := range entries[i:] {
		lo, hi := e.off-start, e.off-start+int64(e.size)
		if hi > int64(len(buf)) {
			return false
		}
		if _, reason := s.decode(buf[lo:hi]); reason != "" {
			return false
		}
	}
	last := entries[len(entries)-1]
	return last.off+int64(last.size) == size
}

// apply replays one record into the catalog.
func (rp *replayer) apply(seg *segment, e entry) {
	c := &rp.l.cat
	if !rp.seen {
		if e.kind == kindMsg {
			rp.leadEnd = e.seq - 1
		} else {
			rp.leadEnd = e.seq
			rp.leadFloor, _ = decodeTombstone(e.tomb, func(uint64) {})
			if isSkip(e.tomb) {
				rp.leadFloor = e.seq + 1 // nothing below it was ever stored here
			}
		}
	}
	switch e.kind {
	case kindMsg:
		if rp.seen && e.seq > rp.lastSeq+1 {
			rp.gap(SeqRange{rp.lastSeq + 1, e.seq - 1}, seg)
		}
		if rp.seen && e.seq <= rp.lastSeq {
			return // cannot happen unless damaged; keep the first
		}
		c.add(e.seq, e.ts, c.subjectBytes(e.subject), seg, e.off, e.size)
		rp.lastSeq, rp.seen = e.seq, true
	case kindDelete:
		if rp.seen && e.seq > rp.lastSeq && !isSkip(e.tomb) {
			rp.gap(SeqRange{rp.lastSeq + 1, e.seq}, seg)
		}
		floor, _ := decodeTombstone(e.tomb, func(seq uint64) { c.remove(seq) })
		c.noteSeq(e.seq, e.ts)
		if e.seq > rp.lastSeq || !rp.seen {
			rp.lastSeq = e.seq
		}
		rp.seen = true
		if floor > 0 {
			c.removeBelow(floor)
		}
	}
}
