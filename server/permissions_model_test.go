package server

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The permission model: brute force over a small universe of subjects,
// so that "inside" and "overlaps" are decided by enumeration rather than
// by the token rules the implementation uses.

// modelTokens are what random patterns are made of; the universe adds
// "z", a token no pattern names, so that wildcards are told apart from
// literals, and one more level, so that ">" is told apart from "*".
var (
	modelTokens   = []string{"a", "b", "*", ">"}
	universeToks  = []string{"a", "b", "z"}
	modelMaxLevel = 3
)

// modelMatch is the ten-line matcher: a published subject's tokens are
// plain text, even "*" and ">".
func modelMatch(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, tok := range p {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || tok != "*" && tok != s[i] {
			return false
		}
	}
	return len(p) == len(s)
}

// universe is every subject of 1..modelMaxLevel+1 tokens from
// universeToks.
func universe() []string { return universeOf(universeToks, modelMaxLevel+1) }

// queueUniverse is the universe of queue group names, for the same
// enumeration over the names the test uses.
var queueUniverse = universeOf([]string{"q", "q1", "q2", "x", "y", "z", "w"}, 3)

func universeOf(toks []string, levels int) []string {
	out := []string{""}
	var all []string
	for range levels {
		var next []string
		for _, prefix := range out {
			for _, tok := range toks {
				s := tok
				if prefix != "" {
					s = prefix + "." + tok
				}
				next = append(next, s)
				all = append(all, s)
			}
		}
		out = next
	}
	return all
}

// modelWithin: every subject of the universe that inner matches, outer
// matches too.
func modelWithin(inner, outer string, u []string) bool {
	for _, s := range u {
		if modelMatch(inner, s) && !modelMatch(outer, s) {
			return false
		}
	}
	return true
}

// modelQueue: group is pattern, or inside it when pattern has wildcards,
// enumerated over the queue names (u is unused: groups are not subjects).
func modelQueue(group, pattern string, _ []string) bool {
	return group == pattern || (strings.Contains(pattern, "*") || strings.Contains(pattern, ">")) && modelWithin(group, pattern, queueUniverse)
}

type modelEntry struct{ subject, queue string }

func modelEntries(list []string) []modelEntry {
	out := make([]modelEntry, len(list))
	for i, e := range list {
		f := strings.Fields(e)
		out[i].subject = f[0]
		if len(f) == 2 {
			out[i].queue = f[1]
		}
	}
	return out
}

// modelCanSubscribe is bus's rule written as directly as possible.
func modelCanSubscribe(p *Permissions, subject, queue string, u []string) bool {
	if p.Subscribe == nil {
		return true
	}
	if allow := modelEntries(p.Subscribe.Allow); len(allow) > 0 {
		plain, queued, queueOK, contained := false, false, false, false
		for _, e := range allow {
			matches := modelMatch(e.subject, subject)
			applies := e.queue == "" || queue != "" && modelQueue(queue, e.queue, u)
			switch {
			case e.queue == "":
				plain = plain || matches
			case matches:
				queued = true
				queueOK = queueOK || applies
			}
			contained = contained || applies && modelWithin(subject, e.subject, u)
		}
		if queue != "" && queued {
			plain = queueOK
		}
		plain = plain && contained
		if !plain {
			return false
		}
	}
	return !modelDenied(p, subject, queue, u)
}

// modelMayRead: some allow entry for the queue matches the message's
// subject (or there is no allow list), and no deny entry refuses it.
func modelMayRead(p *Permissions, subject, queue string, u []string) bool {
	if p.Subscribe == nil {
		return true
	}
	if allow := modelEntries(p.Subscribe.Allow); len(allow) > 0 && !slices.ContainsFunc(allow, func(e modelEntry) bool {
		return modelMatch(e.subject, subject) && (e.queue == "" || queue != "" && modelQueue(queue, e.queue, u))
	}) {
		return false
	}
	return !modelDenied(p, subject, queue, u)
}

// modelDenied: a deny entry matching subject (its tokens as text) that
// applies to the queue.
func modelDenied(p *Permissions, subject, queue string, u []string) bool {
	if p.Subscribe == nil {
		return false
	}
	for _, e := range modelEntries(p.Subscribe.Deny) {
		if modelMatch(e.subject, subject) && (e.queue == "" || queue != "" && modelQueue(queue, e.queue, u)) {
			return true
		}
	}
	return false
}

func modelCanPublish(p *Permissions, subject string) bool {
	if p.Publish == nil {
		return true
	}
	if p.Publish.Allow != nil && !slices.ContainsFunc(p.Publish.Allow, func(a string) bool { return modelMatch(a, subject) }) {
		return false
	}
	return !slices.ContainsFunc(p.Publish.Deny, func(d string) bool { return modelMatch(d, subject) })
}

// randomPattern makes a valid pattern of 1..modelMaxLevel tokens.
func randomPattern(r *rand.Rand) string {
	n := 1 + r.IntN(modelMaxLevel)
	toks := make([]string, n)
	for i := range toks {
		toks[i] = modelTokens[r.IntN(len(modelTokens)-1)] // no ">" but last
	}
	if r.IntN(3) == 0 {
		toks[n-1] = ">"
	}
	return strings.Join(toks, ".")
}

func randomEntries(r *rand.Rand, queues bool) []string {
	n := r.IntN(4)
	if n == 0 && r.IntN(2) == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = randomPattern(r)
		if queues && r.IntN(3) == 0 {
			out[i] += " " + []string{"q1", "q2", "q.*"}[r.IntN(3)]
		}
	}
	return out
}

// randomPermissions makes a random, valid permission set.
func randomPermissions(r *rand.Rand) *Permissions {
	p := &Permissions{}
	if r.IntN(4) != 0 {
		p.Publish = &SubjectPermission{Allow: randomEntries(r, false), Deny: randomEntries(r, false)}
	}
	if r.IntN(4) != 0 {
		p.Subscribe = &SubjectPermission{Allow: randomEntries(r, true), Deny: randomEntries(r, true)}
	}
	return p
}

// Random permission sets and random subscriptions, queues and publishes:
// bus's decisions equal the brute-force model's; and whatever a
// subscription can receive after the delivery filter is granted by an
// allow entry and refused by no deny entry (the property the reference
// breaks when it lets allow "foo.*" admit a SUB to "foo.>").
func TestPermissionsMatchModel(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 9))
	u := universe()
	published := append(slices.Clone(u), "a.*", "a.>", "*", ">", "b.*.a")
	queues := []string{"", "q1", "q2", "q.x", "q.y.z"}
	for i := range 1500 {
		p := randomPermissions(r)
		if err := p.validate(); err != nil {
			t.Fatalf("case %d: random permissions invalid: %v", i, err)
		}
		perms := compilePermissions(p)
		where := func() string {
			return fmt.Sprintf("case %d: publish %+v subscribe %+v", i, p.Publish, p.Subscribe)
		}
		for _, s := range published {
			if got, want := perms.canPublish(s), modelCanPublish(p, s); got != want {
				t.Fatalf("%s: publish %q: bus %v, model %v", where(), s, got, want)
			}
		}
		for range 8 {
			sub, queue := randomPattern(r), queues[r.IntN(len(queues))]
			got, want := perms.canSubscribe(sub, queue), modelCanSubscribe(p, sub, queue, u)
			if got != want {
				t.Fatalf("%s: SUB %q %q: bus %v, model %v", where(), sub, queue, got, want)
			}
			if !got {
				continue
			}
			filtered := perms.needsDeliveryFilter(sub, queue)
			for _, m := range u {
				if !modelMatch(sub, m) {
					continue
				}
				delivered := !filtered || !perms.deniedDelivery([]byte(m), queue)
				if want := !modelDenied(p, m, queue, u); delivered != want {
					t.Fatalf("%s: SUB %q %q, message %q: delivered %v, model %v (filtered %v)", where(), sub, queue, m, delivered, want, filtered)
				}
				if delivered && !modelMayRead(p, m, queue, u) {
					t.Fatalf("%s: SUB %q %q receives %q, which no allow entry grants or a deny entry refuses", where(), sub, queue, m)
				}
			}
		}
	}
}
