package jetlog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// Verify reads back everything the stream has stored while appends,
// reads and deletes go on, and reports what is damaged: every record of
// every segment (checksum, decoding, and for an encrypted stream its
// authentication), the active segment up to what is written, each sealed
// segment's index against its segment, seq.mark against the log, and the
// snapshot and journal of each open consumer. A damaged record of a live
// message is a Loss naming its seq exactly; damage to what is no longer
// live (deleted messages, tombstones) is a damaged record only.
//
// It takes Log.mu (shared) only to list the segments, and again after
// each one to tell which of the seqs around its damage are live; it
// reads the files without any lock, through the log's file cache (each
// segment's descriptor held for its read, as a reader does), in blocks
// of verifyBlock bytes, and never loads a section into the index cache,
// so what readers keep in memory stays. Its memory is one block (or the
// largest record) plus the index of one segment, whatever the stream's
// size. A segment removed (by limits, a purge) while it is checked is
// left out of the report.
//
// Damage never makes Verify fail; ctx ending, Close and I/O errors do.
// What recovery found at Open is not repeated (Recovery has it): a
// record it skipped is still reported as damaged, but its seq is no
// longer live.
//
// opts.BytesPerSecond, if above zero, paces the reads, for a disk that
// publishes share.
func (l *Log) Verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	start := time.Now()
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	rep := &VerifyReport{Stream: l.cfg.Name}
	segs := make([]verifySeg, len(l.cat.segs))
	for i, seg := range l.cat.segs {
		vs := verifySeg{seg: seg, first: seg.first, end: seg.end(), sealed: i < len(l.cat.segs)-1}
		if vs.sealed {
			vs.size = seg.size // fixed once sealed
		} else if l.activeSeg.Load() == seg.id {
			// Read after the catalog: every seq published so far is in
			// the bytes written (the appender notes the size first).
			vs.size = l.activeSize.Load()
		}
		seg.acquire()
		segs[i] = vs
	}
	consumers := make([]*Consumer, 0, len(l.consumers))
	for c := range l.consumers {
		consumers = append(consumers, c)
	}
	lastSeq := l.cat.last
	l.mu.RUnlock()
	defer func() {
		for _, vs := range segs {
			_ = vs.seg.done() // only read
		}
	}()

	durable := l.durable.Load()
	w := newBlockReader(ctx, opts.BytesPerSecond)
	for i := range segs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		vs := &segs[i]
		found, err := l.verifySegment(w, vs)
		if err != nil {
			return nil, err
		}
		if !l.stillHolds(vs.seg) {
			continue // removed meanwhile: nothing of it is live
		}
		rep.Segments++
		rep.Records += found.records
		rep.Bytes += uint64(vs.size)
		rep.Corrupt = append(rep.Corrupt, found.corrupt...)
		if found.indexBad {
			rep.DamagedIndexes = append(rep.DamagedIndexes, idxName(vs.seg.id))
		}
		rep.Losses = append(rep.Losses, l.liveLosses(vs.seg, found.suspect, durable)...)
	}
	l.mu.RLock()
	closed := l.closed
	l.mu.RUnlock()
	if closed {
		return nil, ErrClosed // closed meanwhile: what was read may be gone
	}
	if !l.memory {
		if p := l.verifyMark(lastSeq); p != "" {
			rep.Problems = append(rep.Problems, p)
		}
	}
	slices.SortFunc(consumers, func(a, b *Consumer) int { return strings.Compare(path.Base(a.dir), path.Base(b.dir)) })
	for _, c := range consumers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chk, ok := c.verify()
		if ok {
			rep.Consumers = append(rep.Consumers, chk)
		}
	}
	st := l.State()
	rep.Messages, rep.FirstSeq, rep.LastSeq = st.Msgs, st.FirstSeq, st.LastSeq
	rep.Duration = time.Since(start)
	return rep, nil
}

// VerifyOptions tune Log.Verify. The zero value reads as fast as the
// disk allows.
type VerifyOptions struct {
	// BytesPerSecond bounds the rate of the segment reads; 0 is no bound.
	BytesPerSecond int64
}

// verifySeg is one segment as Verify found it listed: its slots and the
// bytes to check.
type verifySeg struct {
	seg        *segment
	first, end uint64 // the slots' seqs, end exclusive
	size       int64  // bytes of whole records to read
	sealed     bool
}

// segmentFindings is what the read of one segment found.
type segmentFindings struct {
	records  uint64
	corrupt  []*CorruptError
	suspect  []SeqRange // seqs whose records sit in damage; live ones are lost
	indexBad bool
}

// stillHolds reports whether seg is still one of the log's segments.
func (l *Log) stillHolds(seg *segment) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Contains(l.cat.segs, seg)
}

// liveLosses turns the seqs around a segment's damage into losses: the
// live ones, each exact, acknowledged at or below durable.
func (l *Log) liveLosses(seg *segment, suspect []SeqRange, durable uint64) []Loss {
	if len(suspect) == 0 {
		return nil
	}
	var lost []uint64
	l.mu.RLock()
	for _, r := range suspect {
		for seq := r.First; seq <= r.Last && seq >= r.First; seq++ {
			if l.cat.liveUnloaded(seq) {
				lost = append(lost, seq)
			}
		}
	}
	name := l.cfg.Name
	l.mu.RUnlock()
	var out []Loss
	for i := 0; i < len(lost); {
		j := i
		for j+1 < len(lost) && lost[j+1] == lost[j]+1 {
			j++
		}
		r := SeqRange{lost[i], lost[j]}
		i = j + 1
		if r.First <= durable {
			out = append(out, Loss{Stream: name, SeqRange: SeqRange{r.First, min(r.Last, durable)}, Segment: seg.name, Reason: "corrupt record", Acked: LossAcked})
			if r.Last <= durable {
				continue
			}
			r.First = durable + 1
		}
		out = append(out, Loss{Stream: name, SeqRange: r, Segment: seg.name, Reason: "corrupt record", Acked: LossMaybeAcked})
	}
	return out
}

// liveUnloaded reports whether seq is a live message without loading its
// section (a Verify must not push what readers use out of the index
// cache). The caller holds Log.mu, shared or not.
func (c *catalog) liveUnloaded(seq uint64) bool {
	i := c.segIndex(seq)
	if i < 0 {
		return false
	}
	seg := c.segs[i]
	if seg.loaded.Load() {
		return seg.metas[seq-seg.first].subj != nil
	}
	for _, d := range seg.deleted {
		if seq >= d.First && seq <= d.Last {
			return false
		}
	}
	return seg.live > 0
}

// verifySegment reads one segment's records, and a sealed one's index.
func (l *Log) verifySegment(w *blockReader, vs *verifySeg) (segmentFindings, error) {
	var found segmentFindings
	var entries []verifyEntry
	indexed := false
	if vs.sealed && !l.memory {
		data, err := readSealed(l.fs, l.seal, segPath(l.dir, idxName(vs.seg.id)))
		var ce *CorruptError
		switch {
		case err == nil:
			if segSize, es, ok := verifyEntries(data); ok && segSize == vs.size {
				entries, indexed = es, true
			} else {
				found.indexBad = true
			}
		case errors.Is(err, fs.ErrNotExist), errors.As(err, &ce):
			found.indexBad = true
		default:
			if !l.stillHolds(vs.seg) {
				return found, nil // removed with its segment
			}
			return found, fmt.Errorf("jetlog: verify %s: %w", idxName(vs.seg.id), err)
		}
	}
	w.reset(vs.seg.f, vs.size)
	var prev uint64 // the seq of the last intact record: the ones after it are suspect after damage
	if vs.first > 0 {
		prev = vs.first - 1
	}
	next := 0 // the next index entry to match
	damaged := false
	seen := false
	// closeDamage ends a run of damaged records, from the intact one
	// before it to upTo (or to end, the offset where intact records
	// start again): their seqs are the ones between.
	closeDamage := func(upTo uint64, end int64) {
		if prev+1 <= upTo {
			found.suspect = append(found.suspect, SeqRange{prev + 1, upTo})
		}
		for indexed && next < len(entries) && entries[next].off < end {
			next++ // what the damage took; nothing to compare
		}
		damaged = false
	}
	for pos := int64(0); pos < vs.size; {
		r, n, reason, err := w.record(l.seal, pos, prev, seen)
		if err != nil {
			return found, l.readFailed(vs, err)
		}
		if reason == "" {
			if damaged {
				upTo := r.seq // a tombstone's seq is the last assigned: it may be one of the damaged
				if r.kind == kindMsg {
					upTo = r.seq - 1
				}
				closeDamage(upTo, pos)
			}
			found.records++
			if indexed {
				if next >= len(entries) || !entries[next].matches(r, pos, n) {
					found.indexBad = true
				}
				for next < len(entries) && entries[next].off <= pos {
					next++
				}
			}
			prev = max(prev, r.seq)
			seen = true
			pos += int64(n)
			continue
		}
		found.corrupt = append(found.corrupt, &CorruptError{Segment: vs.seg.name, Offset: pos, Reason: reason})
		damaged = true
		resume := int64(-1)
		if reason == reasonAuth && n > 0 {
			resume = pos + int64(n) // whole, but not what was written: the next record follows it
		} else if resume, err = w.resync(l.seal, entries, pos, vs.size); err != nil {
			return found, l.readFailed(vs, err)
		}
		if resume < 0 {
			break
		}
		pos = resume
	}
	if damaged && vs.end > 0 {
		closeDamage(vs.end-1, vs.size)
	}
	if indexed && next < len(entries) {
		found.indexBad = true // entries past the segment's records
	}
	return found, nil
}

// readFailed is the error of a segment that could not be read: none if
// the segment was removed meanwhile.
func (l *Log) readFailed(vs *verifySeg, err error) error {
	if !l.stillHolds(vs.seg) {
		return nil
	}
	return fmt.Errorf("jetlog: verify %s: %w", vs.seg.name, err)
}

// verifyEntry is an index entry as Verify keeps it while it reads the
// segment: where its record starts and a checksum of what the index says
// of it, 12 bytes rather than a decoded entry's 80, so that the index of
// a segment of small messages costs a few MiB.
type verifyEntry struct {
	off int64
	sum uint32
}

// verifyEntries decodes an index file for Verify; false for any damage.
func verifyEntries(b []byte) (int64, []verifyEntry, bool) {
	_, count, ok := checkIndex(b)
	if !ok {
		return 0, nil, false
	}
	out := make([]verifyEntry, 0, min(int(count), len(b)/6+1))
	segSize, ok := walkIndex(b, func(e *entry) {
		out = append(out, verifyEntry{off: e.off, sum: entrySum(e.kind, e.seq, e.ts, e.size, e.subject)})
	})
	return segSize, out, ok
}

// entrySum is the checksum of what an index entry says of its record.
func entrySum(kind byte, seq uint64, ts int64, size uint32, subject []byte) uint32 {
	var b [21]byte
	b[0] = kind
	binary.LittleEndian.PutUint64(b[1:], seq)
	binary.LittleEndian.PutUint64(b[9:], uint64(ts))
	binary.LittleEndian.PutUint32(b[17:], size)
	return crc32.Update(crc32.Checksum(b[:], castagnoli), castagnoli, subject)
}

// matches reports whether an index entry describes the record r found
// at off, n bytes long.
func (e *verifyEntry) matches(r record, off int64, n int) bool {
	return e.off == off && e.sum == entrySum(r.kind, r.seq, r.ts, uint32(n), r.subject)
}

// verifyMark reads seq.mark and checks it against the log: it must be
// readable and never below what the log holds. lastBefore is the last
// seq before it was read. It returns the problem, or "".
func (l *Log) verifyMark(lastBefore uint64) string {
	var m seqMark
	err := readChecked(l.fs, l.seal, path.Join(l.dir, markFile), &m)
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			return fmt.Sprintf("%s damaged (%s): a start checks sequences against the segments only, and rewrites it", markFile, ce.Reason)
		}
		return fmt.Sprintf("%s unreadable: %v", markFile, err)
	}
	l.mu.RLock()
	activeID, firstID, last := l.active().id, l.cat.segs[0].id, l.cat.last
	l.mu.RUnlock()
	switch {
	case m.Version != markVersion:
		return fmt.Sprintf("%s has version %d, not %d: a start checks sequences against the segments only", markFile, m.Version, markVersion)
	case m.Durable > m.Reserved:
		return fmt.Sprintf("%s is inconsistent: durable %d above reserved %d", markFile, m.Durable, m.Reserved)
	case m.Reserved < lastBefore:
		return fmt.Sprintf("%s reserves seqs up to %d only, below the last seq %d: a crash could reuse seqs", markFile, m.Reserved, lastBefore)
	case m.Durable > last:
		return fmt.Sprintf("%s says seqs up to %d were synced, above the last seq %d", markFile, m.Durable, last)
	case m.Seg > activeID || m.FirstSeg > firstID:
		return fmt.Sprintf("%s names segments %d..%d, the log holds %d..%d: a start would report segments missing", markFile, m.FirstSeg, m.Seg, firstID, activeID)
	}
	return ""
}
