package jetlog

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// section is the catalog's view of one segment: the message seqs its
// records hold (slots first..end()-1) and, once loaded, a meta per slot and
// the live seqs of each subject. A segment opened from a catalog snapshot
// starts unloaded with only its summary (first, slots, live, lastTS and the
// deleted seqs); the first access reads its index (catalog.load).
type section struct {
	first  uint64 // seq of the first slot; for an empty section, the next seq
	nslots uint64 // slots while unloaded; len(metas) once loaded
	live   int    // live messages
	lastTS int64  // timestamp of the newest message record

	// indexed is the segment size the index file on disk describes (-1:
	// none known). Set by writeIndex, replay and restoreCatalog.
	indexed int64
	// tailOff is a record boundary in the last tailCheckBytes of an
	// unloaded active segment, carried into the next snapshot.
	tailOff int64

	loadMu sync.Mutex
	loaded atomic.Bool
	sealed atomic.Bool  // no longer the active segment
	used   atomic.Int64 // catalog.clock when last used
	// loadOrder is catalog.loads when the section was loaded or sealed.
	loadOrder atomic.Uint64
	metas     []msgMeta                  // slot i is seq first+i
	bySubj    map[*subjectState][]uint64 // live seqs per subject, ascending
	deleted   []SeqRange                 // while unloaded: slots that are not live
	// While unloaded: the live messages per subject, by ascending subject
	// id, so subject lookups can skip or count the section without loading
	// it. Left in place by a load (readers may be looking).
	subjIDs    []uint64
	subjCounts []uint32
}

// slots returns how many seqs the section spans.
func (s *section) slots() uint64 {
	if s.loaded.Load() {
		return uint64(len(s.metas))
	}
	return s.nslots
}

// end returns the seq after the last slot.
func (s *section) end() uint64 { return s.first + s.slots() }

// subjectCount returns how many live messages of subj the section holds,
// without loading it; false when it cannot tell.
func (s *section) subjectCount(subj *subjectState) (uint64, bool) {
	if s.loaded.Load() {
		return uint64(len(s.bySubj[subj])), true
	}
	if s.subjIDs == nil {
		return 0, s.live == 0
	}
	if i, found := slices.BinarySearch(s.subjIDs, subj.id); found {
		return uint64(s.subjCounts[i]), true
	}
	return 0, true
}

// subjectSummary lists a loaded section's live messages per subject by
// ascending subject id (see subjIDs).
func (s *section) subjectSummary() ([]uint64, []uint32) {
	if !s.loaded.Load() {
		return s.subjIDs, s.subjCounts
	}
	// One pass over the map, then a sort of plain pairs: a section of
	// 500,000 subjects (the catalog snapshot at Close) costs that much
	// less than a second pass and a search per subject.
	type idCount struct {
		id uint64
		n  uint32
	}
	pairs := make([]idCount, 0, len(s.bySubj))
	for subj, seqs := range s.bySubj {
		pairs = append(pairs, idCount{subj.id, uint32(len(seqs))})
	}
	slices.SortFunc(pairs, func(a, b idCount) int { return cmp.Compare(a.id, b.id) })
	ids, counts := make([]uint64, len(pairs)), make([]uint32, len(pairs))
	for i, p := range pairs {
		ids[i], counts[i] = p.id, p.n
	}
	return ids, counts
}

// tailOffset returns a record boundary at most tailCheckBytes before the
// end of the segment, or as close to it as the section knows: where
// Open starts verifying the active segment after a clean shutdown.
func (s *segment) tailOffset() int64 {
	if !s.loaded.Load() {
		return s.tailOff
	}
	tail := int64(0)
	for j := len(s.metas) - 1; j >= 0; j-- {
		m := &s.metas[j]
		if m.size == 0 {
			continue // a seq without a record
		}
		tail = m.off
		if m.off <= s.size-tailCheckBytes {
			break
		}
	}
	return tail
}

// evictIdle drops the sections of sealed segments unused since before
// idle (unix ns), keeping their summary, and returns how many; see
// evictable. The appender runs it.
func (l *Log) evictIdle(idle int64) uint64 {
	var idleSegs []*segment
	for _, seg := range l.evictable() {
		if seg.used.Load() < idle {
			idleSegs = append(idleSegs, seg)
		}
	}
	l.evictSections(idleSegs)
	return uint64(len(idleSegs))
}

// evictable lists the loaded sections that may be dropped: of sealed
// segments whose index file describes the whole segment, since that is
// what reloads them; none while the catalog is damaged, none of memory
// streams. The appender calls it.
func (l *Log) evictable() []*segment {
	c := &l.cat
	if l.memory || c.damaged.Load() || len(c.segs) < 2 {
		return nil
	}
	var out []*segment
	for _, seg := range c.segs[:len(c.segs)-1] {
		if seg.loaded.Load() && seg.indexed == seg.size {
			out = append(out, seg)
		}
	}
	return out
}

// evictSections drops the sections of segs (from evictable), keeping
// their summary.
func (l *Log) evictSections(segs []*segment) {
	if len(segs) == 0 {
		return
	}
	l.mu.Lock() // no reader holds a meta of these sections from here on
	defer l.mu.Unlock()
	for _, seg := range segs {
		seg.loadMu.Lock()
		seg.nslots, seg.deleted = uint64(len(seg.metas)), seg.deletedRanges()
		seg.subjIDs, seg.subjCounts = seg.subjectSummary()
		seg.metas, seg.bySubj = nil, nil
		seg.loaded.Store(false)
		seg.loadMu.Unlock()
	}
	l.index.evicted.Add(uint64(len(segs)))
}

// countFrom counts the live seqs of the loaded-on-demand section at or
// after from (first < from < end), the cheapest way it can: walking the
// slots before or after from, or searching each subject's seqs.
func (s *segment) countFrom(c *catalog, from uint64) uint64 {
	c.load(s)
	before, after := from-s.first, s.end()-from
	if subjects := uint64(len(s.bySubj)); subjects*8 < min(before, after) {
		var n uint64
		for _, seqs := range s.bySubj {
			i, _ := slices.BinarySearch(seqs, from)
			n += uint64(len(seqs) - i)
		}
		return n
	}
	var n uint64
	if after <= before {
		for _, m := range s.metas[before:] {
			if m.subj != nil {
				n++
			}
		}
		return n
	}
	for _, m := range s.metas[:before] {
		if m.subj != nil {
			n++
		}
	}
	return uint64(s.live) - n
}

// dropSubjectSeq removes seq from the live seqs of subj.
func (s *section) dropSubjectSeq(subj *subjectState, seq uint64) {
	seqs := s.bySubj[subj]
	switch {
	case len(seqs) > 0 && seqs[0] == seq:
		seqs = seqs[1:]
	default:
		if i, found := slices.BinarySearch(seqs, seq); found {
			seqs = slices.Delete(seqs, i, i+1)
		}
	}
	if len(seqs) == 0 {
		delete(s.bySubj, subj)
	} else {
		s.bySubj[subj] = seqs
	}
}

// clearSection marks every slot deleted, without loading.
func (s *section) clearSection() {
	s.loadMu.Lock() // a prefetch may be loading it
	defer s.loadMu.Unlock()
	s.live = 0
	if !s.loaded.Load() {
		if s.nslots > 0 {
			s.deleted = []SeqRange{{s.first, s.first + s.nslots - 1}}
		}
		return
	}
	for i := range s.metas {
		s.metas[i].subj = nil
	}
	clear(s.bySubj)
}

// deletedRanges lists the slots that are not live, for a snapshot.
func (s *section) deletedRanges() []SeqRange {
	if !s.loaded.Load() {
		return s.deleted
	}
	var out []SeqRange
	for i := 0; i < len(s.metas); i++ {
		if s.metas[i].subj != nil {
			continue
		}
		j := i
		for j+1 < len(s.metas) && s.metas[j+1].subj == nil {
			j++
		}
		out = append(out, SeqRange{s.first + uint64(i), s.first + uint64(j)})
		i = j
	}
	return out
}

// load fills seg's section from its records if it is not loaded yet. It
// may run under a shared Log.mu: seg.loadMu makes it happen once, and the
// loaded flag publishes the result to the readers that check it.
func (c *catalog) load(seg *segment) {
	if now := c.clock.Load(); seg.used.Load() != now {
		seg.used.Store(now) // once per tick, not per use
	}
	if seg.loaded.Load() {
		return
	}
	seg.loadMu.Lock()
	defer seg.loadMu.Unlock()
	if seg.loaded.Load() {
		return
	}
	if seg.live == 0 {
		// Nothing live (it may even be cleared and its files removed by
		// now): every slot is deleted, and there is nothing to read.
		c.fill(seg, func(*segment, func(*entry)) {})
		return
	}
	c.fill(seg, c.entries)
}

// fill builds an unloaded section from its records and the summary: a
// message record is live unless its seq is in the deleted ranges. A live
// slot without a record, or with a subject the catalog does not know,
// disagrees with the summary (the segment was damaged after the clean
// shutdown): the slot is left deleted and the catalog marked damaged and
// stale, so the appender recounts it (catalog.recount) and the next Open
// replays the log, which reports the loss exactly.
//
// The records are read first, naming subjects by a local number; only the
// few distinct names are then looked up, under subjMu, so a load outside
// Log.mu never keeps the appender from creating subjects while it reads.
func (c *catalog) fill(seg *segment, records func(seg *segment, visit func(e *entry))) {
	metas := make([]msgMeta, seg.nslots)
	local := make([]int32, seg.nslots) // subject number + 1 of each live slot; 0: none
	numbers := map[string]int32{}
	var names []string
	var lastName []byte // consecutive records often share a subject
	var lastNum int32
	del := seg.deleted
	records(seg, func(e *entry) {
		if e.kind != kindMsg || e.seq < seg.first || e.seq >= seg.first+seg.nslots {
			return
		}
		for len(del) > 0 && del[0].Last < e.seq {
			del = del[1:]
		}
		i := e.seq - seg.first
		m := &metas[i]
		if m.size != 0 {
			return // a damaged index may list a seq twice
		}
		m.ts, m.off, m.size = e.ts, e.off, e.size
		if len(del) > 0 && del[0].First <= e.seq {
			return
		}
		if lastName == nil || string(lastName) != string(e.subject) {
			n, ok := numbers[string(e.subject)]
			if !ok {
				n = int32(len(names))
				names = append(names, string(e.subject))
				numbers[names[n]] = n
			}
			lastName, lastNum = append(lastName[:0], e.subject...), n
		}
		local[i] = lastNum + 1
	})
	subjects := make([]*subjectState, len(names))
	c.subjMu.RLock()
	for n, name := range names {
		subjects[n] = c.subjects[name] // nil: unknown, so not live
	}
	c.subjMu.RUnlock()
	// Each subject's seqs get a slice of their exact length, counted
	// first: growing them by append would leave as much again as garbage
	// (see BenchmarkSectionLoad).
	counts := make([]int, len(names))
	for _, n := range local {
		if n != 0 {
			counts[n-1]++
		}
	}
	perSubject := make([][]uint64, len(names))
	for n, k := range counts {
		if subjects[n] != nil {
			perSubject[n] = make([]uint64, 0, k)
		}
	}
	found := 0
	for i, n := range local {
		if n == 0 || subjects[n-1] == nil {
			continue
		}
		metas[i].subj = subjects[n-1]
		perSubject[n-1] = append(perSubject[n-1], seg.first+uint64(i))
		found++
	}
	bySubj := make(map[*subjectState][]uint64, len(names))
	for n, s := range subjects {
		if s != nil && len(perSubject[n]) > 0 {
			bySubj[s] = perSubject[n]
		}
	}
	if found != seg.live {
		c.damaged.Store(true)
		c.stale.Store(true)
	}
	ts := int64(0)
	for i := range metas { // slots without a record keep time sorted
		if metas[i].ts == 0 {
			metas[i].ts = ts
		}
		ts = metas[i].ts
	}
	seg.metas, seg.bySubj, seg.deleted = metas, bySubj, nil
	seg.loadOrder.Store(c.loads.Add(1))
	seg.loaded.Store(true)
	if c.onLoad != nil {
		c.onLoad(seg)
	}
}
