package jetlog

// SkipTo makes next the seq of the next message appended, leaving the
// seqs between unused, as a mirror must to keep its origin's seqs (the
// messages its origin deleted, or its filter leaves out, are gaps). It
// removes nothing: a log whose next seq is already at or past next is
// left alone. The skip is journaled as an empty tombstone carrying the
// new last seq, and synced per the durability mode.
func (l *Log) SkipTo(next uint64) error {
	r := l.getReq()
	defer l.putReq(r)
	r.op, r.seq = opSkip, next
	if err := l.send(r); err != nil {
		return err
	}
	return r.err
}

func (l *Log) doSkip(next uint64) error {
	if l.fatal != nil {
		return l.fatal
	}
	if next <= l.cat.last+1 {
		return nil
	}
	last := next - 1
	// A long gap in the active segment would cost a deleted slot per seq
	// in memory: start the next message in a segment of its own.
	if seg := l.active(); seg.slots() > 0 && last-seg.end() > skipInPlace {
		if err := l.roll(); err != nil {
			return err
		}
	} else if err := l.maybeRoll(); err != nil {
		return err
	}
	if last > l.ap.mark.Reserved {
		if err := l.reserve(last); err != nil {
			return err
		}
	}
	seg := l.active()
	l.ap.buf = l.ap.buf[:0]
	mark := l.ap.idx.mark()
	// A skip stores nothing, so it keeps the time of the newest message
	// (none: 0): the mirror that skips may store next a message with its
	// origin's older time (Expect.KeepTime), which must not be raised.
	ts := l.cat.lastTS
	saved := l.ap.tomb.floor
	l.ap.tomb.floor = skipFloor
	l.encodeTomb(seg, last, ts, nil, 0)
	if err := l.write(seg, l.ap.buf); err != nil {
		l.ap.idx.truncate(mark)
		l.ap.tomb.floor = saved
		return err
	}
	l.ap.tomb.clear()
	l.mu.Lock()
	l.cat.noteSeq(last, ts)
	if !l.ap.dirty {
		l.durable.Store(l.cat.last)
	}
	l.mu.Unlock()
	return nil
}

// skipInPlace is the longest gap SkipTo leaves inside the active segment.
const skipInPlace = 4096

// skipFloor marks a tombstone as a skip: one with floor 1 and no seqs
// removes nothing (seqs start at 1) and is never written otherwise, so
// recovery knows the seqs below its own were never used rather than lost.
// Part of the disk format (doc.go).
const skipFloor = 1

// isSkip reports whether a tombstone payload is a skip's.
func isSkip(tomb []byte) bool {
	n := 0
	floor, ok := decodeTombstone(tomb, func(uint64) { n++ })
	return ok && floor == skipFloor && n == 0
}
