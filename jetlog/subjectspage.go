package jetlog

import (
	"slices"
	"sync"
)

// subjectPages keeps the byte-ordered names of the subjects matching one
// filter while a client pages through them (STREAM.INFO's subjects_filter
// with offset, as "nats stream subjects" does). Without it every page
// collected and sorted every subject again: over a million subjects each
// page of 100,000 cost seconds, most of it the sort and the map built to
// feed it (BenchmarkStreamInfoSubjectPages in server/jetstream).
//
// The list is the only copy kept: 16 bytes a subject (the names are the
// catalog's own strings). It is dropped when its last page is served,
// when the next request finds the subject set changed (subjectSet) or
// asks for another filter, and with the Log. Counts are read live for each
// page, so messages added to or removed from known subjects between pages
// need no rebuild.
type subjectPages struct {
	mu     sync.Mutex // guards the fields below
	filter string
	set    uint64   // catalog.subjectSet when names was collected
	names  []string // sorted; nil when nothing is kept
}

// take returns the kept names for filter if they are those of subject set
// set, or nil.
func (p *subjectPages) take(filter string, set uint64) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.names == nil || p.filter != filter || p.set != set {
		p.names = nil
		return nil
	}
	return p.names
}

func (p *subjectPages) keep(filter string, set uint64, names []string) {
	p.mu.Lock()
	p.filter, p.set, p.names = filter, set, names
	p.mu.Unlock()
}

func (p *subjectPages) drop() {
	p.mu.Lock()
	p.names = nil
	p.mu.Unlock()
}

// SubjectCountsPage is SubjectCounts one page at a time, as STREAM.INFO
// pages subjects_filter: total is the number of subjects matching filter,
// and page holds the live-message counts of at most limit of them, from
// offset (negative is 0) in byte order of their names. When they all fit
// and offset is 0 the page is all of them and nothing is sorted; an offset
// at or past total gives a nil page. The first page of a longer listing
// sorts the names once and keeps them for the pages after it
// (subjectPages), so a later page costs what it returns. The map is the
// caller's.
func (l *Log) SubjectCountsPage(filter string, offset, limit int) (page map[string]uint64, total int) {
	offset, limit = max(offset, 0), max(limit, 1)
	var buf [1]matcher
	fs := oneFilter(filter, &buf)
	if !fs.hasWildcard() {
		counts := l.SubjectCounts(filter) // one lookup
		if offset > 0 {
			return nil, len(counts)
		}
		return counts, len(counts)
	}
	l.mu.RLock()
	set := l.cat.subjectSet.Load()
	names := l.pages.take(filter, set)
	if names == nil {
		names = l.matchingNamesLocked(fs)
		if offset == 0 && len(names) <= limit {
			page = l.countsLocked(names)
			l.mu.RUnlock()
			return page, len(names)
		}
		// Sorting a million names takes a while: writers need not wait.
		l.mu.RUnlock()
		slices.Sort(names)
		l.mu.RLock()
		if l.cat.subjectSet.Load() == set {
			l.pages.keep(filter, set, names)
		}
	}
	total = len(names)
	offset = min(offset, total)
	end := min(offset+limit, total)
	if end > offset {
		page = l.countsLocked(names[offset:end])
	}
	l.mu.RUnlock()
	if end >= total {
		l.pages.drop() // the last page: nobody needs the list any more
	}
	return page, total
}

// matchingNamesLocked lists the subjects matching fs, unsorted; Log.mu is
// held.
func (l *Log) matchingNamesLocked(fs filterSet) []string {
	var names []string
	if fs == nil {
		names = make([]string, 0, len(l.cat.subjects))
	}
	for name := range l.cat.subjects {
		if fs.matches(name) {
			names = append(names, name)
		}
	}
	return names
}

// countsLocked maps names to their live-message counts, leaving out any
// no longer in the stream (removed while a listing was sorted); Log.mu
// is held.
func (l *Log) countsLocked(names []string) map[string]uint64 {
	out := make(map[string]uint64, len(names))
	for _, name := range names {
		if s, ok := l.cat.subjects[name]; ok {
			out[name] = s.count
		}
	}
	return out
}
