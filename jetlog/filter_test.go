package jetlog

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Filters follow subjects' rules, plus the empty filter matching all.
func TestFilterMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		filter, subject string
		want            bool
	}{
		{"a.b", "a.b", true}, {"a.b", "a.c", false}, {"a.*", "a.b", true}, {"a.*", "a.b.c", false},
		{"a.>", "a.b.c", true}, {"a.>", "a", false}, {"*.b", "a.b", true}, {">", "x", true}, {"", "x", true},
		{"a.b.c", "a.b", false}, {"a", "a.b", false}, {"a.b*", "a.b*", true}, {"a.b*", "a.bc", false},
		{"a..b", "a..b", false}, {"a.>.b", "a.x.b", false},
	}
	for _, tc := range cases {
		m := newMatcher(tc.filter)
		if got := m.matches(tc.subject); got != tc.want {
			t.Errorf("matches(%q, %q) = %v", tc.filter, tc.subject, got)
		}
		if got := modelMatch(tc.filter, tc.subject); got != tc.want && tc.filter != "a..b" && tc.filter != "a.>.b" {
			t.Errorf("modelMatch(%q, %q) = %v", tc.filter, tc.subject, got)
		}
	}
}

// The prepared matcher (prefix and suffix checks before subjects.Matches)
// agrees with the model's matcher on random valid filters and subjects.
func TestMatcherAgreesWithModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	tokens := []string{"a", "b", "ab", "*", ">"}
	gen := func(wild bool) string {
		n := 1 + rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			tok := tokens[rng.IntN(len(tokens))]
			if !wild && (tok == "*" || tok == ">") || tok == ">" && i != n-1 {
				tok = "a"
			}
			parts[i] = tok
		}
		return strings.Join(parts, ".")
	}
	for range 20000 {
		filter, subject := gen(true), gen(false)
		m := newMatcher(filter)
		if got, want := m.matches(subject), modelMatch(filter, subject); got != want {
			t.Fatalf("matcher(%q).matches(%q) = %v, model says %v", filter, subject, got, want)
		}
	}
}
