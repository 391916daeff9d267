package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"time"
)

// seqMark is what seq.mark holds: where the stream's sequence stands,
// kept outside the segments so that a segment file going missing (any of
// them, the last one included) can neither make sequences go back nor
// pass unnoticed. Part of the disk format (see doc.go). It is replaced
// atomically (tmp + fsync + rename + dir fsync) at every segment roll,
// before segments are removed, at every reservation, at Open and at a
// clean Close: never once per commit, so it adds no fsync to the hot
// path but one per markMinStep seqs or more (see reserve).
//
// A store written before seq.mark existed has none: Open then checks
// nothing against it and writes one.
type seqMark struct {
	Version int `msgpack:"v"`
	// Seg is the active segment's id when written. A highest segment
	// found below it means the segments after it are missing.
	Seg uint64 `msgpack:"seg"`
	// FirstSeg is the oldest segment the log still needed when written;
	// the ones before it were removed on purpose. A first segment found
	// above it means the ones between are missing.
	FirstSeg uint64 `msgpack:"first_seg"`
	// Durable is the durable mark: every seq up to it had been synced
	// (and so, if appended, acknowledged) when written. Exact at a clean
	// Close.
	Durable uint64 `msgpack:"durable"`
	// Reserved bounds every seq ever assigned: the appender writes a
	// higher one before it writes a seq above it. Equal to Durable at a
	// clean Close.
	Reserved uint64 `msgpack:"reserved"`
}

const markVersion = 1

// The reservation step: how far ahead of the seq being written a new
// mark reserves. It doubles while marks follow each other within
// markFastEvery, so a fast stream writes about one mark a second, and
// starts over at markMinStep otherwise.
const (
	markMinStep   = 4096
	markMaxStep   = 1 << 24
	markFastEvery = time.Second
)

// readMark reads seq.mark. It reports false when there is none (an old
// store) or it is damaged (reported in Problems); recovery then trusts
// the segments alone, as before the mark existed.
func (l *Log) readMark() (seqMark, bool) {
	var m seqMark
	err := readChecked(l.fs, l.seal, path.Join(l.dir, markFile), &m)
	switch {
	case err == nil && m.Version == markVersion && m.Durable <= m.Reserved:
		return m, true
	case err == nil:
		l.report.Problems = append(l.report.Problems, fmt.Sprintf("%s: unusable (version %d): sequences checked against the segments only", markFile, m.Version))
	case !errors.Is(err, fs.ErrNotExist):
		l.report.Problems = append(l.report.Problems, fmt.Sprintf("%s: %v: sequences checked against the segments only", markFile, err))
	}
	return seqMark{}, false
}

// storeMark writes seq.mark for the log as it stands (active segment,
// first segment, durable seq) with the given reservation. It is called
// by the appender (or Open) only. Memory streams keep no mark.
func (l *Log) storeMark(reserved uint64) error {
	if l.memory {
		return nil
	}
	m := seqMark{
		Version:  markVersion,
		Seg:      l.active().id,
		FirstSeg: l.cat.segs[0].id,
		Durable:  max(l.durable.Load(), l.ap.mark.Durable), // never lowered, not even while Open recovers
		Reserved: max(reserved, l.cat.last),
	}
	if err := writeChecked(l.fs, l.seal, path.Join(l.dir, markFile), m); err != nil {
		return fmt.Errorf("jetlog: write %s: %w", markFile, err)
	}
	l.ap.mark = m
	l.markWrites.Add(1)
	return nil
}

// reserve makes seq.mark allow seqs up to at least upTo before the
// appender writes them.
func (l *Log) reserve(upTo uint64) error {
	ap := &l.ap
	now := time.Now() // real time: the step is about I/O rate, not message time
	if ap.markStep == 0 || now.Sub(ap.markAt) >= markFastEvery {
		ap.markStep = markMinStep
	} else {
		ap.markStep = min(2*ap.markStep, markMaxStep)
	}
	ap.markAt = now
	return l.storeMark(upTo + ap.markStep)
}

// noMark is the mark of a memory stream: it never needs to reserve.
var noMark = seqMark{Reserved: math.MaxUint64}

// checkMark compares what the replay found with the mark read before it
// and records what is missing: segments after the last one found,
// segments before the first one found (but not removed on purpose), and
// records missing from the end of the log below the durable mark. It
// reports whether segments are missing at the end.
func (l *Log) checkMark(m seqMark, ids []uint64, rp *replayer) bool {
	c := &l.cat
	if len(ids) > 0 && ids[0] > m.FirstSeg && m.FirstSeg > 0 && rp.leadEnd > 0 {
		lo := max(rp.leadFloor, 1)
		if rp.leadEnd >= lo {
			l.lose(SeqRange{lo, rp.leadEnd}, segRangeName(m.FirstSeg, ids[0]-1), "segment missing", m.Durable)
		}
	}
	found := uint64(0)
	if len(ids) > 0 {
		found = ids[len(ids)-1]
	}
	reported := c.last // the highest seq found or already reported lost
	for _, x := range l.report.Losses {
		reported = max(reported, x.Last)
	}
	tailMissing := m.Seg > found
	switch {
	case tailMissing && m.Reserved > reported:
		l.lose(SeqRange{reported + 1, m.Reserved}, segRangeName(found+1, m.Seg), "segment missing", m.Durable)
	case !tailMissing && m.Durable > reported:
		l.lose(SeqRange{reported + 1, m.Durable}, segName(found), "records missing from the end of the log", m.Durable)
	}
	return tailMissing
}

// keepLostSeqs raises the stream's last seq above every lost seq that
// was, or may have been, acknowledged, so the next append never reuses
// one, and writes it down: in a new segment above the missing ones when
// segments are missing at the end, otherwise in a tombstone.
func (l *Log) keepLostSeqs(tailMissing bool) error {
	c := &l.cat
	top := c.last
	for _, x := range l.report.Losses {
		if x.Acked != LossNotAcked {
			top = max(top, x.Last)
		}
	}
	if top == c.last {
		return nil
	}
	c.noteSeq(top, max(c.lastTS, l.opts.Now().UnixNano()))
	if len(c.segs) == 0 {
		return nil // Open creates the first segment, with the new last seq
	}
	if tailMissing {
		return l.roll()
	}
	l.ap.tomb.force = true
	return l.flushTomb(true)
}

// lose records a lost range, split at the durable mark into the part
// that had been acknowledged and the part that may have been.
func (l *Log) lose(r SeqRange, segment, reason string, durable uint64) {
	if r.First <= durable {
		part := SeqRange{r.First, min(r.Last, durable)}
		l.addLoss(Loss{SeqRange: part, Segment: segment, Reason: reason, Acked: LossAcked})
		if r.Last <= durable {
			return
		}
		r.First = durable + 1
	}
	l.addLoss(Loss{SeqRange: r, Segment: segment, Reason: reason, Acked: LossMaybeAcked})
}

func (l *Log) addLoss(x Loss) {
	x.Stream = l.cfg.Name
	l.report.Losses = append(l.report.Losses, x)
	l.report.Lost = append(l.report.Lost, x.SeqRange)
}

// segRangeName names the segment files first..last.
func segRangeName(first, last uint64) string {
	if first == last {
		return segName(first)
	}
	return segName(first) + " to " + segName(last)
}
