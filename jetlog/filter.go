package jetlog

import (
	"strings"

	"github.com/bus-dev/bus/subjects"
)

// Subject filters follow the NATS rules of package subjects: "*" matches
// one token, a final ">" one or more. jetlog adds one rule of its own: an
// empty filter matches every subject. A filter that is not a valid
// subscription subject matches nothing.

// matchesAll reports whether filter selects every subject.
func matchesAll(filter string) bool { return filter == "" || filter == ">" }

// storable reports whether a message may be stored on subject: a valid
// publish subject that fits a record.
func storable(subject string) bool {
	return len(subject) <= maxSubject && subjects.ValidLiteral(subject)
}

type filterKind uint8

const (
	filterNone     filterKind = iota // not a valid filter: matches nothing
	filterAll                        // "" or ">"
	filterLiteral                    // one subject: lookups go to its summary
	filterWildcard                   // has "*" or ">" tokens
)

// matcher is a subject filter prepared for matching many subjects: the
// literal text before its first and after its last wildcard token is
// checked first, so most subjects that do not match cost a prefix or
// suffix comparison, and only the rest go to subjects.Matches. A filter
// with one wildcard token needs no more than that: what lies between
// prefix and suffix is the part the wildcard takes.
type matcher struct {
	pattern string
	kind    filterKind
	prefix  string // every match starts with it ("orders." for "orders.*.eu")
	suffix  string // every match ends with it (".eu" for "orders.*.eu"; "" after ">")
	// one is the filter's only wildcard token, '*' or '>'; 0 when it has
	// several.
	one byte
}

func newMatcher(pattern string) matcher {
	switch {
	case matchesAll(pattern):
		return matcher{pattern: pattern, kind: filterAll}
	case subjects.ValidLiteral(pattern):
		return matcher{pattern: pattern, kind: filterLiteral}
	case !subjects.ValidSubject(pattern):
		return matcher{pattern: pattern, kind: filterNone}
	}
	f := matcher{pattern: pattern, kind: filterWildcard}
	first, last := -1, -1 // byte ranges of the first and last wildcard tokens
	wildcards := 0
	start := 0
	for i := 0; i <= len(pattern); i++ {
		if i < len(pattern) && pattern[i] != '.' {
			continue
		}
		if i-start == 1 && (pattern[start] == '*' || pattern[start] == '>') {
			if first < 0 {
				first = start
			}
			last = i
			wildcards++
		}
		start = i + 1
	}
	f.prefix, f.suffix = pattern[:first], pattern[last:]
	if wildcards == 1 {
		f.one = pattern[first]
	}
	return f
}

// matches reports whether subject, a valid literal (as every stored
// subject is), matches f.
// see BenchmarkNextFiltered, BenchmarkNumPendingWildcard
func (f *matcher) matches(subject string) bool {
	switch f.kind {
	case filterAll:
		return true
	case filterLiteral:
		return subject == f.pattern
	case filterWildcard:
		if len(subject) <= len(f.prefix)+len(f.suffix) ||
			!strings.HasPrefix(subject, f.prefix) || !strings.HasSuffix(subject, f.suffix) {
			return false
		}
		switch f.one {
		case '>': // the rest, one token or more: there is a rest
			return true
		case '*': // one token: the part between holds no separator
			return strings.IndexByte(subject[len(f.prefix):len(subject)-len(f.suffix)], '.') < 0
		}
		return subjects.Matches(f.pattern, subject)
	}
	return false
}

// filterSet is what a read selects: the subjects matching any of its
// filters. A nil set selects every subject; so does a set with an
// all-matching filter, which newFilterSet turns into nil.
type filterSet []matcher

// newFilterSet prepares patterns into buf (which it appends to, so a
// caller's small array keeps a read from allocating); no pattern at all
// selects every subject.
func newFilterSet(patterns []string, buf []matcher) filterSet {
	if len(patterns) == 0 {
		return nil
	}
	fs := buf[:0]
	for _, p := range patterns {
		f := newMatcher(p)
		if f.kind == filterAll {
			return nil
		}
		fs = append(fs, f)
	}
	return fs
}

// oneFilter is newFilterSet for a single pattern.
func oneFilter(pattern string, buf *[1]matcher) filterSet {
	if buf[0] = newMatcher(pattern); buf[0].kind == filterAll {
		return nil
	}
	return buf[:]
}

// matches reports whether subject matches any filter of fs.
func (fs filterSet) matches(subject string) bool {
	if fs == nil {
		return true
	}
	for i := range fs {
		if fs[i].matches(subject) {
			return true
		}
	}
	return false
}

// hasWildcard reports whether matching fs needs more than map lookups.
func (fs filterSet) hasWildcard() bool {
	for i := range fs {
		if fs[i].kind == filterWildcard {
			return true
		}
	}
	return fs == nil
}

// literalAt reports whether fs[i] is a literal not listed before it (so
// literals that repeat are counted once).
func (fs filterSet) literalAt(i int) bool {
	if fs[i].kind != filterLiteral {
		return false
	}
	for j := range i {
		if fs[j].kind == filterLiteral && fs[j].pattern == fs[i].pattern {
			return false
		}
	}
	return true
}
