package subjects

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// overlapModel decides overlap by brute force: some subject of up to
// five tokens over a small alphabet matches both patterns. Patterns of
// at most four tokens drawn from the same alphabet (plus wildcards)
// overlap exactly when such a subject exists.
func overlapModel(a, b string) bool {
	if !ValidSubject(a) || !ValidSubject(b) {
		return false
	}
	for _, s := range modelSubjects {
		if Matches(a, s) && Matches(b, s) {
			return true
		}
	}
	return false
}

var modelSubjects = func() []string {
	alphabet := []string{"a", "b", "c"}
	var out []string
	level := []string{""}
	for n := 1; n <= 5; n++ {
		var next []string
		for _, p := range level {
			for _, t := range alphabet {
				s := t
				if p != "" {
					s = p + "." + t
				}
				next = append(next, s)
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}()

func randomPattern(rng *rand.Rand) string {
	n := 1 + rng.IntN(4)
	toks := make([]string, n)
	for i := range toks {
		toks[i] = []string{"a", "b", "*", "a", "b"}[rng.IntN(5)]
	}
	if rng.IntN(3) == 0 {
		toks[n-1] = ">"
	}
	return strings.Join(toks, ".")
}

func TestOverlapMatchesModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		a, b := randomPattern(rng), randomPattern(rng)
		if got, want := Overlap(a, b), overlapModel(a, b); got != want {
			t.Fatalf("Overlap(%q, %q) = %v, model says %v", a, b, got, want)
		}
		if Overlap(a, b) != Overlap(b, a) {
			t.Fatalf("Overlap(%q, %q) is not symmetric", a, b)
		}
	}
}

func TestOverlapCases(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"a.b", "a.b", true},
		{"a.*", "a.b", true},
		{"a.*", "*.b", true},
		{"a.>", "a", false},
		{"a.>", "a.b.c", true},
		{">", "x", true},
		{"a.*", "a.b.c", false},
		{"a.b", "a.c", false},
		{"$JS.API.>", "$JS.*.STREAM", true},
		{"bad..subject", "bad.>", false},
	} {
		if got := Overlap(c.a, c.b); got != c.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestTrieOverlappingMatchesPairwise checks the trie walk against Overlap
// over every stored pattern, through random inserts and removes.
func TestTrieOverlappingMatchesPairwise(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	tr := NewTrie[int]()
	stored := map[int]string{}
	for id := range 4000 {
		if len(stored) > 0 && rng.IntN(4) == 0 {
			for k, p := range stored { // remove one at random (map order)
				if err := tr.Remove(p, "", k); err != nil {
					t.Fatal(err)
				}
				delete(stored, k)
				break
			}
		}
		p := randomPattern(rng)
		if err := tr.Insert(p, "", id); err != nil {
			t.Fatal(err)
		}
		stored[id] = p
		q := randomPattern(rng)
		var got, want []int
		tr.Overlapping(q, func(v int) bool { got = append(got, v); return true })
		for k, p := range stored {
			if Overlap(p, q) {
				want = append(want, k)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("Overlapping(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestTrieOverlappingStops(t *testing.T) {
	t.Parallel()
	tr := NewTrie[int]()
	for i := range 10 {
		if err := tr.Insert("a.>", "", i); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	tr.Overlapping("a.b", func(int) bool { n++; return false })
	if n != 1 {
		t.Fatalf("visited %d after asking to stop at the first", n)
	}
}

func BenchmarkTrieOverlapping(b *testing.B) {
	tr := NewTrie[int]()
	for i := range 100000 {
		if err := tr.Insert("orders."+strings.Repeat("x", 1+i%7)+"."+strconv.Itoa(i)+".>", "", i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.Overlapping("orders.xxx.123.new", func(int) bool { return true })
	}
}

// withinModel: every model subject pattern matches, outer matches too.
func withinModel(pattern, outer string) bool {
	if !ValidSubject(pattern) || !ValidSubject(outer) {
		return false
	}
	for _, s := range modelSubjects {
		if Matches(pattern, s) && !Matches(outer, s) {
			return false
		}
	}
	return true
}

func TestWithinMatchesModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		a, b := randomPattern(rng), randomPattern(rng)
		if got, want := Within(a, b), withinModel(a, b); got != want {
			t.Fatalf("Within(%q, %q) = %v, model says %v", a, b, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"$JS.EVENT.ADVISORY.>", "$JS.EVENT.>", true},
		{"$JS.>", "$JS.EVENT.>", false},
		{"a.*", "a.>", true},
		{"a.>", "a.*", false},
		{"a.b", "a.b", true},
	} {
		if got := Within(c.a, c.b); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
