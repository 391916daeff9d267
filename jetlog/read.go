package jetlog

import (
	"fmt"
	"iter"
	"sort"
	"strconv"
	"time"
)

// prefetch loads the section that holds seq (or the next one), if it is
// unloaded, without holding Log.mu, so a reader does not keep the
// appender waiting while it reads an index. The reads that follow find it
// loaded (or, if it was evicted again meanwhile, load it themselves).
func (l *Log) prefetch(seq uint64) {
	l.mu.RLock()
	c := &l.cat
	i := c.segFrom(seq)
	if l.closed || i == len(c.segs) || c.segs[i].live == 0 || c.segs[i].loaded.Load() {
		l.mu.RUnlock()
		return
	}
	seg := c.segs[i]
	seg.acquire() // keeps the file open
	l.prefetches.Add(1)
	l.mu.RUnlock()
	c.load(seg)    // reads nothing if the section was cleared meanwhile
	_ = seg.done() // read-only reference
	l.prefetches.Done()
}

// prefetchFor is prefetch for a read filtered by fs. Literal filters
// start at the section holding the earliest message of their subjects
// that the summaries can place, not at from: from may be in a section
// where none of them has a message, and loading it would be wasted.
// Wildcards (and no filter) start at from.
func (l *Log) prefetchFor(from uint64, fs filterSet) {
	if fs.hasWildcard() {
		l.prefetch(from)
		return
	}
	target := uint64(0)
	l.mu.RLock()
	c := &l.cat
	if !l.closed && c.msgs > 0 {
		from = max(from, c.base)
		for i := range fs {
			s, ok := c.subjects[fs[i].pattern]
			if !ok || fs[i].kind != filterLiteral || s.count == 0 || from > s.last {
				continue
			}
			seq := s.first
			if from > s.first {
				seq = c.sectionOf(s, from)
			}
			if seq != 0 && (target == 0 || seq < target) {
				target = seq
			}
		}
	}
	l.mu.RUnlock()
	if target != 0 {
		l.prefetch(target)
	}
}

// Get returns the message with seq. Errors: ErrNotFound, ErrClosed, a
// *CorruptError if the record fails its checksum, or the read error.
func (l *Log) Get(seq uint64) (Msg, error) {
	l.prefetch(seq)
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Msg{}, ErrClosed
	}
	m, seg := l.cat.locate(seq)
	if m == nil || m.subj == nil {
		l.mu.RUnlock()
		return Msg{}, fmt.Errorf("jetlog: get seq %d: %w", seq, ErrNotFound)
	}
	off, size := m.off, m.size
	seg.acquire()
	l.mu.RUnlock()
	defer seg.done() //nolint:errcheck // read-only reference
	return l.readMsg(seg, off, size, make([]byte, size))
}

// readMsg reads a record into buf (which the returned Msg then owns).
func (l *Log) readMsg(seg *segment, off int64, size uint32, buf []byte) (Msg, error) {
	r, err := seg.readRecord(l.seal, buf[:size], off)
	if err != nil {
		return Msg{}, err
	}
	return recordMsg(seg, off, r)
}

// recordMsg is the message a decoded record at off of seg holds (its
// slices alias the record's buffer).
func recordMsg(seg *segment, off int64, r record) (Msg, error) {
	if r.kind != kindMsg {
		return Msg{}, &CorruptError{Segment: seg.name, Offset: off, Reason: "not a message record"}
	}
	msg := Msg{Seq: r.seq, Time: time.Unix(0, r.ts), Subject: string(r.subject), Data: r.payload}
	if r.compressed {
		data, err := decompress(r.payload)
		if err != nil {
			return Msg{}, &CorruptError{Segment: seg.name, Offset: off, Reason: "bad compressed payload: " + err.Error()}
		}
		msg.Data = data
	}
	if len(r.hdr) > 0 {
		msg.Header = r.hdr
	}
	return msg, nil
}

// Next returns the first message with seq >= from whose subject matches
// any of filters (empty or ">" matches all, and so do no filters at all).
// Filters may overlap: a message matching several is still found once.
// Errors: ErrNotFound when there is none, ErrClosed, or a read error. Up
// to four filters cost no allocation.
func (l *Log) Next(from uint64, filters ...string) (Msg, error) {
	var buf [4]matcher
	m, found, err := l.next(from, newFilterSet(filters, buf[:0]))
	if !found {
		return Msg{}, fmt.Errorf("jetlog: next from %d %s: %w", from, quoteFilters(filters), ErrNotFound)
	}
	return m, err
}

// quoteFilters names filters in an error as the caller gave them: one
// filter as itself, several as a list.
func quoteFilters(filters []string) string {
	if len(filters) == 1 {
		return strconv.Quote(filters[0])
	}
	return fmt.Sprintf("%q", filters)
}

// next is Next for a prepared filter set. It reports found false (and no
// error) when nothing matches; the caller names its input in the error.
func (l *Log) next(from uint64, fs filterSet) (Msg, bool, error) {
	if msgs, handled, err := l.sparseBatch(from, fs, 1); handled {
		if len(msgs) == 0 {
			return Msg{}, true, err
		}
		return msgs[0], true, err
	}
	l.prefetchFor(from, fs)
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Msg{}, true, ErrClosed
	}
	seq, ok := l.nextLocked(from, fs)
	if !ok {
		l.mu.RUnlock()
		return Msg{}, false, nil
	}
	m, seg := l.cat.locate(seq)
	off, size := m.off, m.size
	seg.acquire()
	l.mu.RUnlock()
	defer seg.done() //nolint:errcheck // read-only reference
	m2, err := l.readMsg(seg, off, size, make([]byte, size))
	return m2, true, err
}

func (l *Log) nextLocked(from uint64, fs filterSet) (uint64, bool) {
	c := &l.cat
	if c.msgs == 0 {
		return 0, false
	}
	from = max(from, c.base)
	if fs == nil {
		seq, _, ok := c.nextMatching(from, nil)
		return seq, ok
	}
	best := uint64(0)
	if !fs.hasWildcard() {
		for i := range fs {
			if s, ok := c.subjects[fs[i].pattern]; ok && fs[i].kind == filterLiteral {
				if seq := c.subjectFrom(s, from); seq != 0 && (best == 0 || seq < best) {
					best = seq
				}
			}
		}
		return best, best != 0
	}
	if uint64(len(c.subjects)) < (c.last+1-min(from, c.last+1))/8 {
		// Few subjects: search each matching one instead of every slot.
		for name, s := range c.subjects {
			if !fs.matches(name) {
				continue
			}
			if seq := c.subjectFrom(s, from); seq != 0 && (best == 0 || seq < best) {
				best = seq
			}
		}
		return best, best != 0
	}
	seq, _, ok := c.nextMatching(from, fs)
	return seq, ok
}

// SeqAtTime returns the first live seq stored at or after t, or LastSeq+1.
func (l *Log) SeqAtTime(t time.Time) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	c := &l.cat
	if l.closed {
		return c.last + 1
	}
	ts := t.UnixNano()
	// Timestamps never decrease with seq: find the first segment whose
	// newest message is not older than t, then the slot inside it.
	for _, seg := range c.segs {
		if seg.live == 0 || seg.lastTS < ts {
			continue
		}
		c.load(seg)
		j := sort.Search(len(seg.metas), func(j int) bool { return seg.metas[j].ts >= ts })
		seq, _ := c.nextLive(seg.first + uint64(j))
		return max(seq, c.first())
	}
	return c.last + 1
}

// Messages iterates over the live messages with seq >= from, in order. It
// reads a snapshot of locations taken in chunks, so concurrent appends are
// seen and concurrent removals may or may not be. The iteration stops at
// the first error, which it yields.
func (l *Log) Messages(from uint64) iter.Seq2[Msg, error] {
	return func(yield func(Msg, error) bool) {
		type loc struct {
			seg  *segment
			off  int64
			size uint32
		}
		var locs []loc
		for {
			l.prefetch(from)
			l.mu.RLock()
			if l.closed {
				l.mu.RUnlock()
				yield(Msg{}, ErrClosed)
				return
			}
			c := &l.cat
			locs = locs[:0]
			if c.msgs > 0 {
				from = max(from, c.base)
			}
			for i := c.segFrom(from); i < len(c.segs) && len(locs) < 256; i++ {
				seg := c.segs[i]
				if seg.live == 0 {
					from = seg.end()
					continue
				}
				c.load(seg)
				for j := max(from, seg.first) - seg.first; j < uint64(len(seg.metas)) && len(locs) < 256; j++ {
					if m := &seg.metas[j]; m.subj != nil {
						seg.acquire()
						locs = append(locs, loc{seg, m.off, m.size})
					}
					from = seg.first + j + 1
				}
			}
			l.mu.RUnlock()
			if len(locs) == 0 {
				return
			}
			for k, lc := range locs {
				msg, err := l.readMsg(lc.seg, lc.off, lc.size, make([]byte, lc.size))
				_ = lc.seg.done() // read-only reference
				if !yield(msg, err) || err != nil {
					for _, rest := range locs[k+1:] {
						_ = rest.seg.done()
					}
					return
				}
			}
		}
	}
}

// LastBySubject returns the newest message whose subject matches filter.
// Errors: ErrNotFound when none does, ErrClosed, or a read error. (The
// *BySubject reads follow the package's one rule for "none", see Not
// found in the package doc: a message read errs, a seq is 0.)
func (l *Log) LastBySubject(filter string) (Msg, error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Msg{}, ErrClosed
	}
	seq := l.lastSeqLocked(filter)
	if seq == 0 {
		l.mu.RUnlock()
		return Msg{}, fmt.Errorf("jetlog: last for %q: %w", filter, ErrNotFound)
	}
	m, seg := l.cat.locate(seq)
	off, size := m.off, m.size
	seg.acquire()
	l.mu.RUnlock()
	defer seg.done() //nolint:errcheck // read-only reference
	return l.readMsg(seg, off, size, make([]byte, size))
}

// LastSeqBySubject returns the seq of the newest message whose subject
// matches filter, without reading it; 0 when none does.
func (l *Log) LastSeqBySubject(filter string) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.lastSeqLocked(filter)
}

// PrevSeqBySubject returns the seq of the newest live message of the
// literal subject before seq (a republished message's
// Nats-Last-Sequence); 0 when there is none.
func (l *Log) PrevSeqBySubject(subject string, seq uint64) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	c := &l.cat
	s, ok := c.subjects[subject]
	if !ok || seq <= s.first {
		return 0
	}
	return c.subjectPrev(s, seq-1, min(c.segFrom(seq-1), len(c.segs)-1))
}

func (l *Log) lastSeqLocked(filter string) uint64 {
	var buf [1]matcher
	return l.lastSeqMatching(oneFilter(filter, &buf))
}

// lastSeqMatching returns the seq of the newest live message matching fs,
// or 0; Log.mu is held (or the caller is the appender).
func (l *Log) lastSeqMatching(fs filterSet) uint64 {
	c := &l.cat
	var seq uint64
	if !fs.hasWildcard() {
		for i := range fs {
			if s, ok := c.subjects[fs[i].pattern]; ok && fs[i].kind == filterLiteral {
				seq = max(seq, s.last)
			}
		}
		return seq
	}
	for name, s := range c.subjects {
		if fs.matches(name) {
			seq = max(seq, s.last)
		}
	}
	return seq
}

// SubjectCounts returns the number of live messages per subject matching
// filter (empty or ">" for all). The map is the caller's. A literal filter
// costs one lookup, not a pass over every subject (a million subjects:
// 65 ms a STREAM.INFO with subjects_filter; BenchmarkSubjectCounts).
func (l *Log) SubjectCounts(filter string) map[string]uint64 {
	var buf [1]matcher
	fs := oneFilter(filter, &buf)
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := map[string]uint64{}
	if !fs.hasWildcard() {
		if s, ok := l.cat.subjects[filter]; ok && fs[0].kind == filterLiteral {
			out[s.name] = s.count
		}
		return out
	}
	for name, s := range l.cat.subjects {
		if fs.matches(name) {
			out[name] = s.count
		}
	}
	return out
}

// NumPending counts the live messages with seq >= from whose subject
// matches any of filters (empty or ">" for all, and so do no filters at
// all), without reading them. A message matching several filters counts
// once, so overlapping filters are fine. It works from the per-subject
// summaries: literal filters cost a lookup each, wildcards one pass over
// the subjects (a reader that asks again and again, as a consumer does,
// keeps its count with TrackLag instead).
func (l *Log) NumPending(from uint64, filters ...string) uint64 {
	var buf [4]matcher
	return l.numPending(from, newFilterSet(filters, buf[:0]))
}

func (l *Log) numPending(from uint64, fs filterSet) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return 0
	}
	return l.cat.pendingFrom(from, fs)
}

// pendingFrom is NumPending for a prepared filter set; Log.mu is held.
func (c *catalog) pendingFrom(from uint64, fs filterSet) uint64 {
	if fs == nil {
		return c.countFrom(from)
	}
	var n uint64
	if !fs.hasWildcard() {
		for i := range fs {
			if s, ok := c.subjects[fs[i].pattern]; ok && fs.literalAt(i) {
				n += c.subjectCountFrom(s, from)
			}
		}
		return n
	}
	for name, s := range c.subjects {
		if fs.matches(name) {
			n += c.subjectCountFrom(s, from)
		}
	}
	return n
}
