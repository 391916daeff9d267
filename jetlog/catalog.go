package jetlog

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// catalog is the in-memory view of a stream: its segments, where each live
// message is, per-subject summaries, and the totals State reports.
//
// The per-message part lives in each segment's section (see section.go)
// and is loaded lazily, so a clean restart costs one summary per segment
// and per subject, not one entry per message (see catalogsnap.go). The
// totals and subject summaries are always exact.
//
// Log.mu guards the catalog: writers hold it exclusively, readers shared.
// The appender goroutine, the only writer, may also read without it.
// Loading a section is the one change made without the exclusive lock
// (under the shared one, or none at all in Log.prefetch): the section's
// own mutex (segment.loadMu) serialises it with everything else that
// touches an unloaded section, and subjMu with changes to the subjects
// map.
type catalog struct {
	segs     []*segment // ascending id; the last one is active
	base     uint64     // first live seq when msgs > 0
	baseTS   int64      // its timestamp, so State and expiry need no section
	last     uint64     // highest seq ever assigned
	lastTS   int64      // timestamp of last
	msgs     uint64     // live messages
	bytes    uint64     // record bytes of live messages
	subjects map[string]*subjectState
	// subjMu orders the appender's changes to the subjects map (under
	// Log.mu, exclusive) with lazy loads that read it without Log.mu
	// (Log.prefetch).
	subjMu sync.RWMutex
	// subjectSet changes whenever a subject enters or leaves subjects,
	// so a sorted list of their names kept for paging (subjectspage.go)
	// knows when it is out of date. Counts changing do not touch it.
	subjectSet atomic.Uint64

	// entries visits a segment's records for a lazy load, in order
	// (Log.segmentEntries).
	entries func(seg *segment, visit func(e *entry))
	// onLoad is told of each section loaded from its records (Log.noteLoad).
	onLoad func(seg *segment)
	// loads stamps each section loaded or sealed (section.loadOrder), the
	// tie-break of least recently used within one clock tick.
	loads atomic.Uint64
	// damaged is set when a lazy load disagreed with the summary (records
	// gone since the clean shutdown): the next Close then writes no catalog
	// snapshot, so the next Open rebuilds from the log and reports the loss.
	damaged atomic.Bool
	// stale is set with damaged until the appender recounts the totals and
	// subject summaries from the sections (recount).
	stale  atomic.Bool
	nextID uint64 // of the next new subject
	// lags are the consumer lags kept as messages come and go (lag.go).
	lags []*Lag
	// clock is a coarse now (unix ns) the appender advances on its tick;
	// each use of a section stamps it (section.used) for evictIdle.
	clock atomic.Int64
}

// msgMeta locates one message. A nil subj means deleted.
type msgMeta struct {
	subj *subjectState
	off  int64
	ts   int64 // kept on deleted slots too, so timestamps stay sorted
	size uint32
}

// subjectState summarises the live messages of one subject.
type subjectState struct {
	name  string
	id    uint64 // never reused: unloaded sections count subjects by id
	count uint64
	first uint64 // lowest live seq
	last  uint64 // highest live seq
}

func newCatalog() catalog {
	return catalog{subjects: map[string]*subjectState{}}
}

// first returns the first live seq, or last+1 when empty.
func (c *catalog) first() uint64 {
	if c.msgs == 0 {
		return c.last + 1
	}
	return c.base
}

// segIndex returns the index of the segment whose slots hold seq, or -1.
func (c *catalog) segIndex(seq uint64) int {
	i := sort.Search(len(c.segs), func(i int) bool { return c.segs[i].end() > seq })
	if i == len(c.segs) || c.segs[i].first > seq {
		return -1
	}
	return i
}

// segFrom returns the index of the first segment with slots at or after
// seq (len(segs) when there is none).
func (c *catalog) segFrom(seq uint64) int {
	return sort.Search(len(c.segs), func(i int) bool { return c.segs[i].end() > seq })
}

// meta returns the meta of seq and whether it is live.
func (c *catalog) meta(seq uint64) (*msgMeta, bool) {
	m, _ := c.locate(seq)
	return m, m != nil && m.subj != nil
}

// locate returns the meta of seq and its segment, or nil when no segment
// holds seq.
func (c *catalog) locate(seq uint64) (*msgMeta, *segment) {
	i := c.segIndex(seq)
	if i < 0 {
		return nil, nil
	}
	seg := c.segs[i]
	c.load(seg)
	return &seg.metas[seq-seg.first], seg
}

// loadAt loads the section holding seq, if any.
func (c *catalog) loadAt(seq uint64) {
	if i := c.segIndex(seq); i >= 0 {
		c.load(c.segs[i])
	}
}

// subject returns the interned state for name, creating it.
func (c *catalog) subject(name string) *subjectState {
	if s, ok := c.subjects[name]; ok {
		return s
	}
	s := &subjectState{name: strings.Clone(name), id: c.nextID} // do not pin the caller's memory
	c.nextID++
	c.subjMu.Lock()
	c.subjects[s.name] = s
	c.subjMu.Unlock()
	c.subjectSet.Add(1)
	return s
}

// subjectBytes is subject for a name decoded from disk; it copies the name
// only when the subject is new.
func (c *catalog) subjectBytes(name []byte) *subjectState {
	if s, ok := c.subjects[string(name)]; ok { // no allocation for the lookup
		return s
	}
	return c.subject(string(name))
}

// add records a new live message in seg, the newest (loaded) segment; seq
// must be above every seq added so far. Seqs skipped since the last add
// become deleted slots.
func (c *catalog) add(seq uint64, ts int64, subj *subjectState, seg *segment, off int64, size uint32) {
	if seg.slots() == 0 {
		seg.first = seq
	}
	for seg.end() < seq {
		seg.metas = append(seg.metas, msgMeta{ts: ts})
	}
	seg.metas = append(seg.metas, msgMeta{subj: subj, off: off, ts: ts, size: size})
	seg.bySubj[subj] = append(seg.bySubj[subj], seq)
	seg.live++
	seg.lastTS = ts
	if subj.count == 0 {
		subj.first = seq
	}
	subj.count++
	subj.last = seq
	if len(c.lags) > 0 {
		c.lagAdded(seq, subj)
	}
	if c.msgs == 0 {
		c.base, c.baseTS = seq, ts
	}
	c.msgs++
	c.bytes += uint64(size)
	c.noteSeq(seq, ts)
}

// noteSeq raises last (tombstones carry the last seq of their time, so a
// fully purged stream keeps its sequence across restarts).
func (c *catalog) noteSeq(seq uint64, ts int64) {
	if seq > c.last {
		c.last = seq
		c.lastTS = ts
	}
}

// remove deletes seq and reports whether it was live.
func (c *catalog) remove(seq uint64) bool {
	i := c.segIndex(seq)
	if i < 0 {
		return false
	}
	seg := c.segs[i]
	c.load(seg)
	m := &seg.metas[seq-seg.first]
	s := m.subj
	if s == nil {
		return false
	}
	if len(c.lags) > 0 {
		c.lagRemoved(seq, s)
	}
	seg.dropSubjectSeq(s, seq)
	seg.live--
	c.msgs--
	c.bytes -= uint64(m.size)
	m.subj = nil // off and size stay: tailOffset uses them
	s.count--
	switch {
	case s.count == 0:
		c.subjMu.Lock()
		delete(c.subjects, s.name)
		c.subjMu.Unlock()
		c.subjectSet.Add(1)
	case seq == s.first:
		s.first = c.subjectNext(s, seq+1, i)
	case seq == s.last:
		s.last = c.subjectPrev(s, seq-1, i)
	}
	switch {
	case c.msgs == 0:
		c.base, c.baseTS = c.last+1, 0
	case seq == c.base:
		c.base, c.baseTS = c.nextLive(seq + 1)
	}
	return true
}

// nextLive returns the first live seq at or after from and its time, or
// last+1.
func (c *catalog) nextLive(from uint64) (uint64, int64) {
	if seq, ts, ok := c.nextMatching(from, nil); ok {
		return seq, ts
	}
	return c.last + 1, 0
}

// nextMatching returns the first live seq at or after from whose subject
// matches fs (nil for all), and its time, walking the slots.
func (c *catalog) nextMatching(from uint64, fs filterSet) (uint64, int64, bool) {
	all := fs == nil
	for i := c.segFrom(from); i < len(c.segs) && c.msgs > 0; i++ {
		seg := c.segs[i]
		if seg.live == 0 {
			continue
		}
		c.load(seg)
		for j := max(from, seg.first) - seg.first; j < uint64(len(seg.metas)); j++ {
			if m := &seg.metas[j]; m.subj != nil && (all || fs.matches(m.subj.name)) {
				return seg.first + j, m.ts, true
			}
		}
	}
	return 0, 0, false
}

// subjectNext returns the first live seq of s at or after from, searching
// from segment index i on; 0 when there is none.
func (c *catalog) subjectNext(s *subjectState, from uint64, i int) uint64 {
	for ; i < len(c.segs) && c.segs[i].first <= s.last; i++ {
		seg := c.segs[i]
		if n, known := seg.subjectCount(s); known && n == 0 {
			continue
		}
		c.load(seg)
		seqs := seg.bySubj[s]
		if k, _ := slices.BinarySearch(seqs, from); k < len(seqs) {
			return seqs[k]
		}
	}
	return 0
}

// sectionOf returns the first seq at or after from of the first section
// that may hold a live message of s at or after from, judged by the
// sections' subject counts without loading any; 0 when none can.
func (c *catalog) sectionOf(s *subjectState, from uint64) uint64 {
	for i := c.segFrom(from); i < len(c.segs) && c.segs[i].first <= s.last; i++ {
		if n, known := c.segs[i].subjectCount(s); !known || n > 0 {
			return max(from, c.segs[i].first)
		}
	}
	return 0
}

// subjectPrev returns the last live seq of s at or before upTo, searching
// from segment index i down; 0 when there is none.
func (c *catalog) subjectPrev(s *subjectState, upTo uint64, i int) uint64 {
	for ; i >= 0 && c.segs[i].end() > s.first; i-- {
		seg := c.segs[i]
		if n, known := seg.subjectCount(s); known && n == 0 {
			continue
		}
		c.load(seg)
		seqs := seg.bySubj[s]
		if k, found := slices.BinarySearch(seqs, upTo); found {
			return seqs[k]
		} else if k > 0 {
			return seqs[k-1]
		}
	}
	return 0
}

// subjectFrom returns the first live seq of s at or after from, or 0.
func (c *catalog) subjectFrom(s *subjectState, from uint64) uint64 {
	switch {
	case from <= s.first:
		return s.first
	case from > s.last:
		return 0
	}
	return c.subjectNext(s, from, c.segFrom(from))
}

// subjectCountFrom counts the live seqs of s at or after from.
func (c *catalog) subjectCountFrom(s *subjectState, from uint64) uint64 {
	switch {
	case from <= s.first:
		return s.count
	case from > s.last:
		return 0
	}
	var n uint64
	for i := c.segFrom(from); i < len(c.segs) && c.segs[i].first <= s.last; i++ {
		seg := c.segs[i]
		if k, known := seg.subjectCount(s); known && (k == 0 || seg.first >= from) {
			n += k // the whole section counts: no need to load it
			continue
		}
		c.load(seg)
		seqs := seg.bySubj[s]
		k, _ := slices.BinarySearch(seqs, from)
		n += uint64(len(seqs) - k)
	}
	return n
}

// subjectSeqs lists the live seqs of s, ascending.
func (c *catalog) subjectSeqs(s *subjectState) []uint64 {
	out := make([]uint64, 0, s.count)
	for i := c.segFrom(s.first); i < len(c.segs) && c.segs[i].first <= s.last; i++ {
		if seg := c.segs[i]; seg.live > 0 {
			if n, known := seg.subjectCount(s); known && n == 0 {
				continue
			}
			c.load(seg)
			out = append(out, seg.bySubj[s]...)
		}
	}
	return out
}

// countFrom counts the live seqs at or after from.
func (c *catalog) countFrom(from uint64) uint64 {
	if from <= c.first() {
		return c.msgs
	}
	var n uint64
	i := c.segFrom(from)
	if i < len(c.segs) && c.segs[i].first < from && c.segs[i].live > 0 {
		n = c.segs[i].countFrom(c, from)
		i++
	}
	for ; i < len(c.segs); i++ {
		n += uint64(c.segs[i].live)
	}
	return n
}

// removeBelow deletes every live seq below floor and returns how many.
func (c *catalog) removeBelow(floor uint64) uint64 {
	if c.msgs == 0 || c.base >= floor {
		return 0
	}
	if floor > c.last {
		n := c.msgs
		c.clear()
		return n
	}
	var n uint64
	for c.msgs > 0 && c.base < floor && c.remove(c.base) {
		n++
	}
	return n
}

// clear deletes every message without loading unloaded sections.
func (c *catalog) clear() {
	for _, seg := range c.segs {
		seg.clearSection()
	}
	c.subjMu.Lock()
	clear(c.subjects)
	c.subjMu.Unlock()
	c.subjectSet.Add(1)
	c.msgs, c.bytes = 0, 0
	c.base, c.baseTS = c.last+1, 0
	c.lagCleared()
}

// oldest returns the first live seq and its time.
func (c *catalog) oldest() (uint64, int64, bool) {
	if c.msgs == 0 {
		return 0, 0, false
	}
	return c.base, c.baseTS, true
}

// numDeleted counts the deleted seqs between first and last.
func (c *catalog) numDeleted() uint64 {
	if c.msgs == 0 {
		return 0
	}
	return c.last - c.base + 1 - c.msgs
}

// newest returns the seq of the k-th newest live message (1 <= k <= msgs).
func (c *catalog) newest(k uint64) uint64 {
	for i := len(c.segs) - 1; i >= 0; i-- {
		seg := c.segs[i]
		if uint64(seg.live) < k {
			k -= uint64(seg.live)
			continue
		}
		c.load(seg)
		for j := len(seg.metas) - 1; j >= 0; j-- {
			if seg.metas[j].subj != nil {
				if k--; k == 0 {
					return seg.first + uint64(j)
				}
			}
		}
	}
	return c.first()
}

// appendSegment adds a new, empty segment after the others. Its section
// starts at the next seq and time, so the sections stay sorted.
func (c *catalog) appendSegment(seg *segment) {
	seg.first, seg.lastTS = c.last+1, c.lastTS
	c.segs = append(c.segs, seg)
}

// recount rebuilds the totals, the subject summaries and each section's
// live seqs from the sections, after a lazy load found records missing
// (catalog.stale). It loads every section, so it costs O(messages); it
// runs in the appender with Log.mu held, and only after damage.
func (c *catalog) recount() {
	c.lagForget()
	for c.stale.Swap(false) {
		for _, seg := range c.segs {
			c.load(seg) // may find more damage: the loop goes round again
		}
	}
	for _, s := range c.subjects {
		s.count = 0
	}
	c.msgs, c.bytes = 0, 0
	c.base, c.baseTS = c.last+1, 0
	for _, seg := range c.segs {
		seg.live = 0
		clear(seg.bySubj)
		for j := range seg.metas {
			m := &seg.metas[j]
			if m.subj == nil {
				continue
			}
			s, seq := m.subj, seg.first+uint64(j)
			if s.count == 0 {
				s.first = seq
			}
			s.count++
			s.last = seq
			seg.bySubj[s] = append(seg.bySubj[s], seq)
			seg.live++
			if c.msgs == 0 {
				c.base, c.baseTS = seq, m.ts
			}
			c.msgs++
			c.bytes += uint64(m.size)
		}
	}
	c.subjMu.Lock()
	for name, s := range c.subjects {
		if s.count == 0 {
			delete(c.subjects, name)
		}
	}
	c.subjMu.Unlock()
	c.subjectSet.Add(1)
}
