package server

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/bus-dev/bus/subjects"
)

// Mapping is one subject mapping, as in nats-server's mappings block: a
// message a client publishes to a subject matching Source is routed to one
// of Destinations instead (docs/mappings.md).
type Mapping struct {
	Source       string
	Destinations []MapDestination
}

// MapDestination is one destination of a Mapping: a subject transform
// destination (subjects.Transform: "$1", "{{partition(8,1)}}", …) taking
// Weight percent of the messages. When the weights add up to less than 100,
// the rest keep their own subject, unless Source is itself one of the
// destinations, in which case the rest are dropped: nats-server's rules.
type MapDestination struct {
	Subject string
	Weight  int // percent, 0..100
	// Cluster limits the destination to servers of that cluster. bus has
	// no cluster, so such destinations are never used, as nats-server
	// uses none of another cluster's; they are still checked.
	Cluster string
}

// mapper routes published subjects through the mappings. It is immutable
// after newMapper, so every reader uses it without a lock; the trie
// guards its own match cache. A server without mappings has a nil mapper
// and pays one nil check per publish.
type mapper struct {
	trie *subjects.Trie[*mapping]
}

// mapping is one compiled Mapping.
type mapping struct {
	source []string // Source's tokens, to find the most specific match
	// dests are in increasing order of upTo, the cumulative weight: a roll
	// r in 0..99 picks the first with r < upTo, none (a drop) if there is
	// no such one. When the only one has upTo 100 no roll is needed.
	dests []weightedDest
}

type weightedDest struct {
	tr    *subjects.Transform // nil: the message keeps its subject
	upTo  int
	roll  bool // weights to choose from; false for a single destination of 100
	share int  // this destination's own weight, for sorting
}

// newMapper compiles the mappings; nil for none. Its errors name the
// mapping's source and, where one is at fault, the destination.
func newMapper(ms []Mapping) (*mapper, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	m := &mapper{trie: subjects.NewTrie[*mapping]()}
	seenSource := map[string]bool{}
	for _, mp := range ms {
		if seenSource[mp.Source] {
			return nil, fmt.Errorf("server: mappings %q: listed twice", mp.Source)
		}
		seenSource[mp.Source] = true
		c, err := compileMapping(mp)
		if err != nil {
			return nil, err
		}
		if err := m.trie.Insert(mp.Source, "", c); err != nil {
			return nil, fmt.Errorf("server: mappings %q: %w", mp.Source, err)
		}
	}
	return m, nil
}

// compileMapping checks one mapping as nats-server's AddWeightedMappings
// does and builds its weighted destinations.
func compileMapping(mp Mapping) (*mapping, error) {
	src := mp.Source
	if !subjects.ValidSubject(src) {
		return nil, fmt.Errorf("server: mappings %q: %w", src, subjects.ErrBadSubject)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("server: mappings %q: "+format, append([]any{src}, args...)...)
	}
	seen := map[string]bool{}
	total := map[string]int{}
	var dests []weightedDest
	for _, d := range mp.Destinations {
		if seen[d.Subject] {
			return nil, bad("destination %q is listed twice", d.Subject)
		}
		seen[d.Subject] = true
		if d.Weight < 0 || d.Weight > 100 {
			return nil, bad("destination %q: weight %d is not 0..100", d.Subject, d.Weight)
		}
		if total[d.Cluster] += d.Weight; total[d.Cluster] > 100 {
			return nil, bad("weights add up to more than 100")
		}
		if d.Subject == "" {
			return nil, bad("empty destination")
		}
		if err := subjects.ValidateMapping(src, d.Subject); err != nil {
			return nil, bad("destination %q: %w", d.Subject, err)
		}
		tr, err := subjects.NewTransform(src, d.Subject)
		if err != nil {
			return nil, bad("destination %q: %w", d.Subject, err)
		}
		if d.Cluster != "" {
			continue // another cluster's: see MapDestination.Cluster
		}
		dests = append(dests, weightedDest{tr: tr, share: d.Weight})
	}
	sum := 0
	for _, d := range dests {
		sum += d.share
	}
	// What the weights leave keeps its subject, unless the source is
	// listed as a destination: then it is dropped.
	if sum != 100 && !seen[src] {
		rest := 100 - sum
		if len(dests) == 0 {
			rest = 100
		}
		dests = append(dests, weightedDest{share: rest})
	}
	slices.SortStableFunc(dests, func(a, b weightedDest) int { return cmp.Compare(a.share, b.share) })
	upTo := 0
	for i := range dests {
		upTo += dests[i].share
		dests[i].upTo = upTo
	}
	single := len(dests) == 1 && dests[0].upTo == 100
	for i := range dests {
		dests[i].roll = !single
	}
	return &mapping{source: strings.Split(src, "."), dests: dests}, nil
}

// apply returns the subject a publish to subject goes to: subject itself
// when no mapping matches, or when the chosen destination keeps it; an
// empty subject when the message is dropped. A new subject is the only
// allocation; see BenchmarkMapperApply. The result is read-only.
func (m *mapper) apply(subject []byte) []byte {
	r := m.trie.Match(subject)
	if len(r.Plain) == 0 {
		return subject
	}
	best := r.Plain[0]
	for _, mp := range r.Plain[1:] {
		if moreSpecific(mp.source, best.source) {
			best = mp
		}
	}
	d := best.pick()
	if d == nil {
		return subject[:0] // dropped: routed nowhere
	}
	if d.tr == nil {
		return subject
	}
	out, err := d.tr.Apply(bytesView(subject))
	if err != nil {
		// A subject with a "*" or ">" token, which a non-pedantic
		// client may publish: the trie matched it, the transform
		// refuses it. It keeps its subject.
		return subject
	}
	return unsafe.Slice(unsafe.StringData(out), len(out))
}

// liveMappings are an account's mappings in force: a reload or an
// account JWT update swaps them, and the next publish routes by the new
// ones, as in the reference. An account without mappings holds nil and
// pays one atomic load per publish.
type liveMappings struct {
	current atomic.Pointer[mapper]
}

func newLiveMappings(m *mapper) *liveMappings {
	l := &liveMappings{}
	l.current.Store(m)
	return l
}

// apply is mapper.apply with the mappings in force.
func (l *liveMappings) apply(subject []byte) []byte {
	if m := l.current.Load(); m != nil {
		return m.apply(subject)
	}
	return subject
}

// pick chooses a destination by weight, nil for a drop.
func (mp *mapping) pick() *weightedDest {
	if len(mp.dests) == 1 && !mp.dests[0].roll {
		return &mp.dests[0]
	}
	roll := rand.IntN(100) // the reference rolls per message too
	for i := range mp.dests {
		if roll < mp.dests[i].upTo {
			return &mp.dests[i]
		}
	}
	return nil
}

// moreSpecific reports whether pattern a is a closer fit than b for a
// subject both match: at the first token where they differ, a literal beats
// "*", which beats ">". The reference takes the first of its mappings that
// matches, in an order that its config parser does not keep; bus makes the
// choice deterministic.
func moreSpecific(a, b []string) bool {
	rank := func(tok string) int {
		switch tok {
		case ">":
			return 0
		case "*":
			return 1
		}
		return 2
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if ra, rb := rank(a[i]), rank(b[i]); ra != rb {
			return ra > rb
		}
	}
	return len(a) > len(b) // "a.*.>" fits "a.b.c" more closely than "a.>"
}
