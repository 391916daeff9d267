package subjects

import (
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// FuzzMatch matches the subject on an empty trie (warming the cache),
// inserts the patterns (one per line; every third in queue "q", invalid ones
// rejected as the reference rejects them), matches again, removes every
// other pattern, and matches again. Both
// results must equal the model's, and nothing may panic. Seeds are in
// testdata/fuzz/FuzzMatch.
func FuzzMatch(f *testing.F) {
	f.Add("foo.bar\nfoo.*\nfoo.>\n>", "foo.bar")
	f.Add("$JS.API.>\n$JS.API.CONSUMER.CREATE.*.*.>", "$JS.API.CONSUMER.CREATE.S.C.orders.>")
	f.Fuzz(func(t *testing.T, patterns, subject string) {
		tr := NewTrie[int]()
		var m model
		lines := strings.Split(patterns, "\n")
		if len(lines) > 64 {
			lines = lines[:64]
		}
		subs := make([]sub, 0, len(lines))
		if !tr.MatchString(subject).Empty() { // warm the cache: inserts must invalidate
			t.Fatalf("empty trie matched %q", subject)
		}
		for i, p := range lines {
			s := sub{pattern: p, id: i}
			if i%3 == 2 {
				s.queue = "q"
			}
			got, want := tr.Insert(s.pattern, s.queue, s.id), m.insert(s)
			if !sameError(got, want) {
				t.Fatalf("Insert(%q, %q) = %v, model says %v", s.pattern, s.queue, got, want)
			}
			if want == nil {
				subs = append(subs, s)
			}
		}
		check := func(step string) {
			t.Helper()
			want := m.match(subject)
			if got := describe(tr.Match([]byte(subject))); got != want {
				t.Fatalf("%s: Match(%q) = %s, model says %s", step, subject, got, want)
			}
			if got := describe(tr.MatchString(subject)); got != want {
				t.Fatalf("%s: MatchString(%q) = %s, model says %s", step, subject, got, want)
			}
			if got := Matches(lines[0], subject); got != (server.IsValidSubject(lines[0]) && modelMatches(lines[0], subject)) {
				t.Fatalf("Matches(%q, %q) = %v", lines[0], subject, got)
			}
		}
		check("after insert")
		for i := 0; i < len(subs); i += 2 {
			if err := tr.Remove(subs[i].pattern, subs[i].queue, subs[i].id); err != nil {
				t.Fatalf("Remove(%+v): %v", subs[i], err)
			}
			if err := m.remove(subs[i]); err != nil {
				t.Fatalf("model remove(%+v): %v", subs[i], err)
			}
		}
		check("after remove")
		if tr.Count() != len(m.subs) {
			t.Fatalf("Count() = %d, model has %d", tr.Count(), len(m.subs))
		}
		checkShape(t, &tr.root, true)
	})
}
