package jetlog

import (
	"slices"
	"sync"
)

// Lag is one reader's count of the live messages at or after a seq
// (its floor) whose subject matches its filters: a consumer's lag, asked
// for with every pull reply. Log.NumPending answers a wildcard filter with
// a pass over every subject of the stream (0.58 s a call at a million
// subjects; BenchmarkNumPendingWildcard), so a consumer filtered to
// "orders.>" catching up over many subjects spent its time counting, not
// delivering. A Lag with a wildcard among its filters is therefore
// kept by the log as it changes: each message stored at or after the
// floor that matches adds one, each one removed (Delete, Purge, limits,
// max age, a message TTL, a rollup) takes one away. Moving the floor
// walks the slots between the old floor and the new one, which a reader
// moving forward has just read anyway, or, when that walk would cost more
// than a pass over the subjects or would load sections, counts afresh.
//
// Filters that are all literals (or none at all) are answered from the
// per-subject summaries, a lookup per filter, as Log.NumPending does:
// nothing is kept for them.
//
// A Lag is safe for concurrent use. Close it when done: until then
// every append pays a match against its filters.
type Lag struct {
	l  *Log
	fs filterSet // owned; never changed
	// kept is whether the log keeps the count: fs has a wildcard, and
	// Close was not called. It changes under Log.mu held exclusively.
	kept bool

	// mu orders At calls with each other. The fields below change under
	// it with Log.mu held shared (At), or under Log.mu held exclusively
	// (the appender's catalog changes, Close), which excludes At.
	mu    sync.Mutex
	floor uint64 // n counts seqs >= floor
	n     uint64
	known bool // n is exact; false after a recount until the next At
}

// TrackLag returns a Lag for filters (as NumPending takes them:
// none, "" or ">" for every subject). The filters are copied. It starts
// with its floor after the last seq, where nothing is pending, so each
// At costs what moving the floor there costs: the first one of a reader
// starting near the end walks back a few slots, one starting further
// back than the stream has subjects counts as NumPending does.
func (l *Log) TrackLag(filters []string) *Lag {
	p := &Lag{l: l, fs: newFilterSet(slices.Clone(filters), nil)}
	if p.fs == nil || !p.fs.hasWildcard() {
		return p
	}
	p.kept = true
	l.mu.Lock()
	p.floor, p.known = l.cat.last+1, true
	l.cat.lags = append(l.cat.lags, p)
	l.mu.Unlock()
	return p
}

// At returns the number of live messages with seq >= from that match the
// filters, and makes from the floor. 0 after the log is closed.
func (p *Lag) At(from uint64) uint64 {
	l := p.l
	l.mu.RLock()
	defer l.mu.RUnlock()
	c := &l.cat
	switch {
	case l.closed:
		return 0
	case !p.kept: // kept changes only under Log.mu held exclusively
		return c.pendingFrom(from, p.fs)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known || !c.walkable(p.floor, from) {
		p.n, p.known = c.pendingFrom(from, p.fs), true
	} else if from > p.floor {
		p.n -= c.countMatching(p.floor, from, p.fs)
	} else if from < p.floor {
		p.n += c.countMatching(from, p.floor, p.fs)
	}
	p.floor = from
	return p.n
}

// Close stops the log keeping the count. At still answers afterwards,
// counting afresh each time.
func (p *Lag) Close() {
	if !p.kept {
		return
	}
	l := p.l
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &l.cat
	if i := slices.Index(c.lags, p); i >= 0 {
		c.lags = slices.Delete(c.lags, i, i+1)
	}
	p.kept = false
}

// lagAdded counts a message just stored (catalog.add); Log.mu is held
// exclusively.
func (c *catalog) lagAdded(seq uint64, subj *subjectState) {
	for _, p := range c.lags {
		if p.known && seq >= p.floor && p.fs.matches(subj.name) {
			p.n++
		}
	}
}

// lagRemoved counts a live message just removed (catalog.remove);
// Log.mu is held exclusively.
func (c *catalog) lagRemoved(seq uint64, subj *subjectState) {
	for _, p := range c.lags {
		if p.known && seq >= p.floor && p.fs.matches(subj.name) {
			p.n--
		}
	}
}

// lagCleared zeroes every count: the stream holds nothing
// (catalog.clear).
func (c *catalog) lagCleared() {
	for _, p := range c.lags {
		p.n = 0
	}
}

// lagForget makes every count start afresh at its next At: the
// summaries were rebuilt (catalog.recount), so what was kept from them may
// be wrong.
func (c *catalog) lagForget() {
	for _, p := range c.lags {
		p.known = false
	}
}

// walkable reports whether countMatching between a and b (in either
// order) is the cheaper way to move a floor: it visits no more slots than
// the stream has subjects, which a count afresh (pendingFrom) passes over,
// and only loaded sections. An unloaded one (after a restart, or evicted)
// would be read from its index file under Log.mu, where a count afresh
// reads at most the section at the new floor.
func (c *catalog) walkable(a, b uint64) bool {
	lo, hi := min(a, b), max(a, b)
	lo, hi = max(lo, c.first()), min(hi, c.last+1)
	if lo >= hi {
		return true
	}
	if hi-lo > uint64(len(c.subjects)) {
		return false
	}
	for i := c.segFrom(lo); i < len(c.segs) && c.segs[i].first < hi; i++ {
		if seg := c.segs[i]; seg.live > 0 && !seg.loaded.Load() {
			return false
		}
	}
	return true
}

// countMatching counts the live messages with lo <= seq < hi whose
// subject matches fs, walking their slots.
func (c *catalog) countMatching(lo, hi uint64, fs filterSet) uint64 {
	lo, hi = max(lo, c.first()), min(hi, c.last+1)
	var n uint64
	for i := c.segFrom(lo); i < len(c.segs) && c.segs[i].first < hi && lo < hi; i++ {
		seg := c.segs[i]
		if seg.live == 0 {
			continue
		}
		c.load(seg)
		from, to := max(lo, seg.first)-seg.first, min(hi, seg.end())-seg.first
		for _, m := range seg.metas[from:to] {
			if m.subj != nil && fs.matches(m.subj.name) {
				n++
			}
		}
	}
	return n
}
