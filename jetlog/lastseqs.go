package jetlog

import (
	"fmt"
	"slices"
)

// LastSeqs returns, in ascending order, the seq of the newest live
// message at or before upTo of every subject that matches any of filters
// (each a subject or a pattern; a subject matched by several filters
// counts once). It reads no message, only the per-subject summaries: a
// literal filter costs a lookup, a wildcard one pass over the subjects.
// When more than limit subjects match it stops and returns
// ErrTooManySubjects, so a filter that matches a million keys costs the
// caller one pass, not a million-entry answer. Unlike Next, the empty
// filter matches nothing here, as in the reference's multi_last.
func (l *Log) LastSeqs(filters []string, upTo uint64, limit int) ([]uint64, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	c := &l.cat
	seen := map[*subjectState]bool{}
	var seqs []uint64
	add := func(s *subjectState) bool {
		if seen[s] {
			return true
		}
		seen[s] = true
		if seq := c.lastAtOrBefore(s, upTo); seq != 0 {
			seqs = append(seqs, seq)
		}
		return len(seqs) <= limit
	}
	for _, f := range filters {
		if f == "" {
			continue
		}
		m := newMatcher(f)
		switch m.kind {
		case filterNone:
			continue
		case filterLiteral:
			if s, ok := c.subjects[f]; ok && !add(s) {
				return nil, fmt.Errorf("jetlog: last seqs of %q: %w", filters, ErrTooManySubjects)
			}
			continue
		}
		for name, s := range c.subjects {
			if m.matches(name) && !add(s) {
				return nil, fmt.Errorf("jetlog: last seqs of %q: %w", filters, ErrTooManySubjects)
			}
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// lastAtOrBefore returns the newest live seq of s at or before upTo, or 0.
func (c *catalog) lastAtOrBefore(s *subjectState, upTo uint64) uint64 {
	switch {
	case s.last <= upTo:
		return s.last
	case s.first > upTo:
		return 0
	}
	return c.subjectPrev(s, upTo, min(c.segFrom(upTo), len(c.segs)-1))
}
