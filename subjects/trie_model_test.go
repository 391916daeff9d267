package subjects

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// model is the brute-force reference for Trie: a list of subscriptions and
// a ten-line matches. Validity comes from the reference server, not from
// this package.
type model struct {
	subs []sub
}

// modelMatches splits both sides on '.' and compares token by token.
func modelMatches(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	if slices.Contains(s, "") {
		return false // a published subject with an empty token reaches no one
	}
	for i, tok := range p {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || (tok != "*" && tok != s[i]) {
			return false
		}
	}
	return len(p) == len(s)
}

func (m *model) insert(s sub) error {
	if !server.IsValidSubject(s.pattern) {
		return ErrBadSubject
	}
	if s.queue != "" && strings.ContainsAny(s.queue, " \t\r\n\f") {
		return ErrBadQueue
	}
	m.subs = append(m.subs, s)
	return nil
}

func (m *model) remove(s sub) error {
	if !server.IsValidSubject(s.pattern) {
		return ErrBadSubject
	}
	i := slices.Index(m.subs, s)
	if i < 0 {
		return ErrNotFound
	}
	m.subs = slices.Delete(m.subs, i, i+1)
	return nil
}

// match renders what subject reaches in the format of describe.
func (m *model) match(subject string) string {
	r := &Result[int]{}
	groups := map[[2]string]int{} // (pattern, queue) -> index in r.Queues
	for _, s := range m.subs {
		if !modelMatches(s.pattern, subject) {
			continue
		}
		if s.queue == "" {
			r.Plain = append(r.Plain, s.id)
			continue
		}
		key := [2]string{s.pattern, s.queue}
		i, ok := groups[key]
		if !ok {
			i = len(r.Queues)
			groups[key] = i
			r.Queues = append(r.Queues, Group[int]{Name: s.queue})
		}
		r.Queues[i].Members = append(r.Queues[i].Members, s.id)
	}
	return describe(r)
}

// gen draws patterns and subjects over a tiny alphabet, so that patterns
// collide, overlap and share prefixes all the time. wide adds literals, so
// that nodes go past maxEdges children and switch to a map and back.
type gen struct {
	rng  *rand.Rand
	wide bool
}

func (g gen) literal() string {
	if g.wide && g.rng.IntN(2) == 0 {
		return g.pick("d", "e", "f", "g", "h", "i", "j", "k", "l", "m")
	}
	return g.pick("a", "b", "c", "a", "b", "c", "fo*")
}

func (g gen) pick(options ...string) string { return options[g.rng.IntN(len(options))] }

func (g gen) pattern() string {
	n := 1 + g.rng.IntN(4)
	tokens := make([]string, n)
	for i := range tokens {
		switch k := g.rng.IntN(10); {
		case k < 6:
			tokens[i] = g.literal()
		case k < 8:
			tokens[i] = "*"
		case k < 9:
			tokens[i] = ">"
		default:
			tokens[i] = "" // invalid
		}
	}
	return strings.Join(tokens, ".") // sometimes invalid: "", ">" not last
}

func (g gen) subject() string {
	n := 1 + g.rng.IntN(4)
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = g.literal()
		if g.rng.IntN(8) == 0 {
			tokens[i] = g.pick("*", ">") // literal wildcard tokens, as published
		}
	}
	if g.rng.IntN(20) == 0 {
		return g.pick("", ".a", "a.", "a..b", "a b")
	}
	return strings.Join(tokens, ".")
}

// hotSubjects are matched after every step, so the cache always holds a
// result for each and every change must invalidate the right ones.
func hotSubjects() []string {
	var out []string
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		for _, tok := range []string{"a", "b", "c", "*"} {
			s := tok
			if prefix != "" {
				s = prefix + "." + tok
			}
			out = append(out, s)
			if depth > 1 {
				walk(s, depth-1)
			}
		}
	}
	walk("", 3)
	return append(out, "a.>", ">", "fo*.a", "a..b")
}

// TestTrieMatchesModel runs seeded random sequences of insert, remove and
// match against the model, checking every hot subject after every step.
func TestTrieMatchesModel(t *testing.T) {
	t.Parallel()
	seeds, steps := 40, 600
	if testing.Short() || raceEnabled {
		seeds = 10 // the race detector makes each step ~10x slower
	}
	hot := hotSubjects()
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			g := gen{rng: rand.New(rand.NewPCG(seed, 0x5eed)), wide: seed%2 == 1}
			tr := NewTrie[int]()
			var m model
			for step := range steps {
				op := randomStep(t, g, tr, &m)
				if tr.Count() != len(m.subs) {
					t.Fatalf("step %d (%s): Count() = %d, model has %d", step, op, tr.Count(), len(m.subs))
				}
				for _, s := range hot {
					if got, want := describe(tr.MatchString(s)), m.match(s); got != want {
						t.Fatalf("step %d (%s): MatchString(%q) = %s, model says %s", step, op, s, got, want)
					}
				}
				checkShape(t, &tr.root, true)
			}
		})
	}
}

// randomStep does one random operation on both trie and model, checks
// they agree, and returns what it did for failure messages.
func randomStep(t *testing.T, g gen, tr *Trie[int], m *model) string {
	t.Helper()
	switch k := g.rng.IntN(10); {
	case k < 4: // insert
		s := sub{g.pattern(), g.pick("", "", "q", "r", "bad q"), g.rng.IntN(6)}
		got, want := tr.Insert(s.pattern, s.queue, s.id), m.insert(s)
		if !sameError(got, want) {
			t.Fatalf("Insert(%q, %q, %d) = %v, model says %v", s.pattern, s.queue, s.id, got, want)
		}
		return fmt.Sprintf("insert %+v", s)
	case k < 8: // remove, mostly something that is there
		s := sub{g.pattern(), g.pick("", "q"), g.rng.IntN(6)}
		if len(m.subs) > 0 && g.rng.IntN(4) != 0 {
			s = m.subs[g.rng.IntN(len(m.subs))]
		}
		got, want := tr.Remove(s.pattern, s.queue, s.id), m.remove(s)
		if !sameError(got, want) {
			t.Fatalf("Remove(%q, %q, %d) = %v, model says %v", s.pattern, s.queue, s.id, got, want)
		}
		return fmt.Sprintf("remove %+v", s)
	default: // match a random subject, twice, as bytes and as string
		s := g.subject()
		want := m.match(s)
		for range 2 {
			if got := describe(tr.Match([]byte(s))); got != want {
				t.Fatalf("Match(%q) = %s, model says %s", s, got, want)
			}
		}
		return fmt.Sprintf("match %q", s)
	}
}

func sameError(got, want error) bool {
	if want == nil {
		return got == nil
	}
	return errors.Is(got, want)
}

// checkShape verifies the invariants Remove's pruning and the literal
// slice/map switch maintain: every node but the root is in use, and the
// children are in the representation their count calls for.
func checkShape[T comparable](t *testing.T, n *node[T], isRoot bool) {
	t.Helper()
	if !isRoot && n.unused() {
		t.Fatalf("unused node left in the trie")
	}
	if n.literals != nil && (n.edges != nil || len(n.literals) <= maxEdges/2) {
		t.Fatalf("node has %d literals in a map and %d in a slice", len(n.literals), len(n.edges))
	}
	if len(n.edges) > maxEdges {
		t.Fatalf("node has %d literals in a slice, limit %d", len(n.edges), maxEdges)
	}
	if n.fwc != nil && (n.fwc.edges != nil || n.fwc.literals != nil || n.fwc.pwc != nil || n.fwc.fwc != nil) {
		t.Fatalf("a '>' node has children")
	}
	for _, q := range n.queues {
		if len(q.members) == 0 {
			t.Fatalf("empty queue group %q kept", q.name)
		}
	}
	for _, e := range n.edges {
		checkShape(t, e.child, false)
	}
	for _, c := range n.literals {
		checkShape(t, c, false)
	}
	for _, c := range []*node[T]{n.pwc, n.fwc} {
		if c != nil {
			checkShape(t, c, false)
		}
	}
}
