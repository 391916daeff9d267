package conf

import (
	"math/rand/v2"
	"testing"

	"github.com/bus-dev/bus/subjects"
)

// TestValidSubjectIsSubjectsRule pins conf's copy of the subject rule
// (conf imports nothing of ours) to subjects.ValidSubject, the one the
// server applies: over hand-picked cases and random strings of the
// characters that matter.
func TestValidSubjectIsSubjectsRule(t *testing.T) {
	t.Parallel()
	cases := []string{"", "a", "a.b", "a.*", "a.>", ">", "*", "a.>.b", "a..b", ".a", "a.", "a b", "a\tb",
		"a\rb", "a\nb", "a\fb", "fo*", "a>b", "$JS.API.>", "ünï.*"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab.*> \t\r\n\f"
	for range 20000 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := validSubject(s), subjects.ValidSubject(s); got != want {
			t.Fatalf("validSubject(%q) = %v, subjects.ValidSubject = %v", s, got, want)
		}
	}
}
