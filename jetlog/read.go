package jetlog

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"time"
)

// Get returns the message with seq. Errors: ErrNotFound, ErrClosed, a
// *CorruptError if the record fails its checksum, or the read error.
func (l *Log) Get(seq uint64) (Msg, error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Msg{}, ErrClosed
	}
	m, ok := l.cat.meta(seq)
	if !ok {
		l.mu.RUnlock()
		return Msg{}, fmt.Errorf("jetlog: get seq %d: %w", seq, ErrNotFound)
	}
	seg, off, size := m.seg, m.off, m.size
	seg.acquire()
	l.mu.RUnlock()
	defer seg.release() //nolint:errcheck // read-only reference
	return readMsg(seg, off, size, make([]byte, size))
}

// readMsg reads a record into buf (which the returned Msg then owns).
func readMsg(seg *segment, off int64, size uint32, buf []byte) (Msg, error) {
	r, err := seg.readRecord(buf[:size], off)
	if err != nil {
		return Msg{}, err
	}
	if r.kind != kindMsg {
		return Msg{}, &CorruptError{Segment: seg.name, Offset: off, Reason: "not a message record"}
	}
	msg := Msg{Seq: r.seq, Time: time.Unix(0, r.ts), Subject: string(r.subject), Data: r.payload}
	if len(r.hdr) > 0 {
		msg.Header = r.hdr
	}
	return msg, nil
}

// Next returns the first message with seq >= from whose subject matches
// filter (empty or ">" matches all). Errors: ErrNotFound when there is
// none, ErrClosed, or a read error.
func (l *Log) Next(from uint64, filter string) (Msg, error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Msg{}, ErrClosed
	}
	seq, ok := l.nextLocked(from, filter)
	if !ok {
		l.mu.RUnlock()
		return Msg{}, fmt.Errorf("jetlog: next from %d %q: %w", from, filter, ErrNotFound)
	}
	m := &l.cat.metas[seq-l.cat.base]
	seg, off, size := m.seg, m.off, m.size
	seg.acquire()
	l.mu.RUnlock()
	defer seg.release() //nolint:errcheck // read-only reference
	return readMsg(seg, off, size, make([]byte, size))
}

func (l *Log) nextLocked(from uint64, filter string) (uint64, bool) {
	c := &l.cat
	from = max(from, c.base)
	if isLiteral(filter) {
		s, ok := c.subjects[filter]
		if !ok {
			return 0, false
		}
		i := sort.Search(len(s.seqs), func(i int) bool { return s.seqs[i] >= from })
		if i == len(s.seqs) {
			return 0, false
		}
		return s.seqs[i], true
	}
	all := filter == "" || filter == ">"
	if !all && uint64(len(c.subjects)) < (uint64(len(c.metas))-min(from-c.base, uint64(len(c.metas))))/8 {
		// Few subjects: search each matching one instead of every slot.
		best, found := uint64(0), false
		for name, s := range c.subjects {
			if !matchFilter(filter, name) {
				continue
			}
			i, _ := slices.BinarySearch(s.seqs, from)
			if i < len(s.seqs) && (!found || s.seqs[i] < best) {
				best, found = s.seqs[i], true
			}
		}
		return best, found
	}
	for i := from - c.base; i < uint64(len(c.metas)); i++ {
		m := &c.metas[i]
		if m.seg != nil && (all || matchFilter(filter, m.subj.name)) {
			return c.base + i, true
		}
	}
	return 0, false
}

// SeqAtTime returns the first live seq stored at or after t, or LastSeq+1.
func (l *Log) SeqAtTime(t time.Time) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	c := &l.cat
	ts := t.UnixNano()
	// Timestamps never decrease with seq, so search over the slots.
	i := sort.Search(len(c.metas), func(i int) bool {
		for j := i; j < len(c.metas); j++ {
			if c.metas[j].seg != nil {
				return c.metas[j].ts >= ts
			}
		}
		return true
	})
	for i < len(c.metas) && c.metas[i].seg == nil {
		i++
	}
	if i == len(c.metas) {
		return c.last + 1
	}
	return c.base + uint64(i)
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
			l.mu.RLock()
			if l.closed {
				l.mu.RUnlock()
				yield(Msg{}, ErrClosed)
				return
			}
			c := &l.cat
			from = max(from, c.base)
			locs = locs[:0]
			for i := from - c.base; i < uint64(len(c.metas)) && len(locs) < 256; i++ {
				if m := &c.metas[i]; m.seg != nil {
					m.seg.acquire()
					locs = append(locs, loc{m.seg, m.off, m.size})
				}
				from = c.base + i + 1
			}
			l.mu.RUnlock()
			if len(locs) == 0 {
				return
			}
			for k, lc := range locs {
				msg, err := readMsg(lc.seg, lc.off, lc.size, make([]byte, lc.size))
				_ = lc.seg.release() // read-only reference
				if !yield(msg, err) || err != nil {
					for _, rest := range locs[k+1:] {
						_ = rest.seg.release()
					}
					return
				}
			}
		}
	}
}

// LastBySubject returns the newest message whose subject matches filter.
func (l *Log) LastBySubject(filter string) (Msg, error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Msg{}, ErrClosed
	}
	var seq uint64
	if isLiteral(filter) {
		if s, ok := l.cat.subjects[filter]; ok {
			seq = s.seqs[len(s.seqs)-1]
		}
	} else {
		for name, s := range l.cat.subjects {
			if matchFilter(filter, name) {
				seq = max(seq, s.seqs[len(s.seqs)-1])
			}
		}
	}
	if seq == 0 {
		l.mu.RUnlock()
		return Msg{}, fmt.Errorf("jetlog: last for %q: %w", filter, ErrNotFound)
	}
	m := &l.cat.metas[seq-l.cat.base]
	seg, off, size := m.seg, m.off, m.size
	seg.acquire()
	l.mu.RUnlock()
	defer seg.release() //nolint:errcheck // read-only reference
	return readMsg(seg, off, size, make([]byte, size))
}

// SubjectCounts returns the number of live messages per subject matching
// filter (empty or ">" for all). The map is the caller's.
func (l *Log) SubjectCounts(filter string) map[string]uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := map[string]uint64{}
	for name, s := range l.cat.subjects {
		if matchFilter(filter, name) {
			out[name] = uint64(len(s.seqs))
		}
	}
	return out
}

// Subjects returns the live subjects, sorted.
func (l *Log) Subjects() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Sorted(maps.Keys(l.cat.subjects))
}

// NumPending counts the live messages with seq >= from whose subject
// matches filter (empty or ">" for all), without reading them.
func (l *Log) NumPending(from uint64, filter string) uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	c := &l.cat
	if filter == "" || filter == ">" {
		if from <= c.base {
			return c.msgs
		}
		var n uint64
		for _, s := range c.subjects {
			n += countFrom(s.seqs, from)
		}
		return n
	}
	if isLiteral(filter) {
		if s, ok := c.subjects[filter]; ok {
			return countFrom(s.seqs, from)
		}
		return 0
	}
	var n uint64
	for name, s := range c.subjects {
		if matchFilter(filter, name) {
			n += countFrom(s.seqs, from)
		}
	}
	return n
}

// countFrom counts the seqs >= from in an ascending slice.
func countFrom(seqs []uint64, from uint64) uint64 {
	i, _ := slices.BinarySearch(seqs, from)
	return uint64(len(seqs) - i)
}
