package tests

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/subjects"
)

// The transform engine against the reference's own (server.NewSubjectTransform,
// NewSubjectTransformStrict, ValidateMapping and Match): the same transforms
// are accepted and refused, and every accepted one gives the same subject,
// or the same refusal, for each subject tried.

// transformCases are hand-picked pairs covering every form and the
// reference's odd edges; each is tried on every subject in transformSubjects.
var transformCases = []struct{ src, dest string }{
	{"foo", "bar"},
	{"foo", "bar.baz"},
	{"foo.*", "bar.$1"},
	{"foo.*.*", "bar.$2.$1"},
	{"foo.*.*", "bar.$1.$1"},
	{"foo.*.*", "bar.$1"},
	{"foo.*", "bar.$2"},
	{"foo.*", "bar.$0"},
	{"foo.*", "bar.$-1"},
	{"foo.*", "bar.$+1"},
	{"foo.*", "bar.$x"},
	{"foo.*", "bar.$"},
	{"foo.*", "bar.*"},
	{"foo.>", "bar.>"},
	{"foo.>", "bar"},
	{"foo", "bar.>"},
	{">", ">"},
	{"", ">"},
	{">", "foo.>"},
	{"*.>", "$1.x.>"},
	{"foo.*.>", "{{wildcard(1)}}.>"},
	{"foo.*", "{{wildcard(1)}}"},
	{"foo.*", "{{Wildcard(1)}}"},
	{"foo.*", "{{WILDCARD(1)}}"},
	{"foo.*", "{{ wildcard ( 1 ) }}"},
	{"foo.*", "{{wildcard()}}"},
	{"foo.*", "{{wildcard( )}}"},
	{"foo.*", "{{wildcard(1,2)}}"},
	{"foo.*", "{{wildcard(a)}}"},
	{"foo.*", "{{wildcard(\t1)}}"},
	{"foo.*", "x{{wildcard(1)}}"},
	{"foo.*", "{{x}}{{wildcard(1)}}"},
	{"foo.*", "{{wildcard(1)}}{{wildcard(1)}}"},
	{"foo.*", "{{}}"},
	{"foo.*", "{{x}}"},
	{"foo.*", "{{nope(1)}}"},
	{"foo.*", "{{partition(3)}}"},
	{"foo.*", "p.{{partition(3,1)}}"},
	{"foo.*.*", "p.{{partition(10,1,2)}}.$1"},
	{"foo.*.*", "p.{{partition(10, 2, 1)}}"},
	{"foo.*", "{{partition(0,1)}}"},
	{"foo.*", "{{partition(-7,1)}}"},
	{"foo.*", "{{partition(4294967297,1)}}"},
	{"foo.*", "{{partition(2147483647,1)}}"},
	{"foo.*", "{{partition(-2147483649,1)}}"},
	{"foo.*", "{{partition(3,2)}}"},
	{"foo.*", "{{partition(3,0)}}"},
	{"foo.*", "{{partition(3,x)}}"},
	{"foo.*", "{{partition()}}"},
	{"foo.*", "{{Partition(3,1)}}"},
	{"foo", "{{partition(3)}}"},
	{"foo", "{{partition(3,1)}}"},
	{"foo.>", "{{partition(3)}}.>"},
	{"foo.>", "{{partition(3,0)}}.>"},
	{"foo.>", "{{partition(3,1)}}.>"},
	{"foo.*", "{{splitFromLeft(1,2)}}"},
	{"foo.*", "{{SplitFromLeft(1,2)}}"},
	{"foo.*", "{{splitfromleft(1,2)}}"},
	{"foo.*", "{{SPLITFROMLEFT(1,2)}}"},
	{"foo.*", "{{splitFromLeft(1)}}"},
	{"foo.*", "{{splitFromLeft(1,2,3)}}"},
	{"foo.*", "{{splitFromLeft(1,99999999999)}}"},
	{"foo.*", "{{splitFromLeft(1,-2)}}"},
	{"foo.*", "{{splitFromRight(1,2)}}"},
	{"foo.*", "{{splitFromRight(1,0)}}"},
	{"foo.*", "{{sliceFromLeft(1,2)}}"},
	{"foo.*", "{{sliceFromLeft(1,3)}}"},
	{"foo.*", "{{sliceFromRight(1,2)}}"},
	{"foo.*", "{{sliceFromRight(1,3)}}"},
	{"foo.*", "{{sliceFromRight(1,1)}}"},
	{"foo.*", "{{split(1,-)}}"},
	{"foo.*", "{{split(1,\"-\")}}"},
	{"foo.*", "{{split(1,)}}"},
	{"foo.*", "{{split(1, -)}}"},
	{"foo.*", "{{split(1,- )}}"},
	{"foo.*", "{{split(1,\t-)}}"},
	{"foo.*", "{{split(1,ab)}}"},
	{"foo.*", "{{split(1)}}"},
	{"foo.*", "{{split(1,-,-)}}"},
	{"foo.*", "{{left(1,2)}}"},
	{"foo.*", "{{Left(1,0)}}"},
	{"foo.*", "{{right(1,2)}}"},
	{"foo.*", "{{right(1,100)}}"},
	{"foo.*", "{{right(2,1)}}"},
	{"foo", "{{left(1,1)}}"},
	{"foo", "{{wildcard(1)}}"},
	{"foo", "$1"},
	{"foo.*", "{{random(5)}}"},
	{"foo", "{{random(5)}}"},
	{"foo.*", "{{random(5,6)}}"},
	{"foo.*", "{{random()}}"},
	{"foo.*", "{{random(0)}}"},
	{"foo.*.*", "$1.{{random(3)}}"},
	{"foo.*", "{{wildcard(1)\n}}"},
	{"foo.*", "{{wildcard(1\n)}}"},
	{"foo.*", "{{wildcard(1) \n}}"},
	{"foo.*", "a b.$1"},
	{"foo bar.*", "x.$1"},
	{"foo.*", "x.{{ split(1,-) }}"},
	{"foo..*", "x"},
	{"foo.>.*", "x"},
	{"foo.*", "x..y"},
	{"foo.*", ""},
	{"", "x"},
	{"foo.*", "x.>"},
	{"foo.>", "x.*"},
	{"*0", "0"},
	{"a.*x.*", "$1"},
}

var transformSubjects = []string{
	"foo", "bar", "foo.bar", "foo.ab-cd", "foo.-ab--cd-", "foo.abcdefg",
	"foo.a", "foo.bar.baz", "foo.x.y.z", "foo.é-ü", "foo.\xff\xfe",
	"foo.*", "foo.>", "foo..bar", "", "foo.", "a b.c", "foo bar.x",
}

func TestTransformMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range transformCases {
		for _, subject := range transformSubjects {
			compareTransform(t, tc.src, tc.dest, subject)
		}
	}
}

// TestTransformPartitionMatchesReference pins the partition of many keys:
// a key must land in the same bucket on bus and on the reference.
func TestTransformPartitionMatchesReference(t *testing.T) {
	t.Parallel()
	for _, dest := range []string{"p.{{partition(7,1)}}", "p.{{partition(64,1,2)}}", "p.{{partition(3)}}.$2"} {
		for i := range 2000 {
			compareTransform(t, "orders.*.*", dest, fmt.Sprintf("orders.customer-%d.%d", i, i%13))
		}
	}
}

// TestTransformPropertyMatchesReference compiles random sources and
// destinations (valid and not) and applies them to random subjects.
func TestTransformPropertyMatchesReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		src, dest := randomPattern(r), randomDest(r)
		for range 4 {
			compareTransform(t, src, dest, randomSubject(r, src))
		}
	}
}

// FuzzTransformReference is the differential fuzz target; FuzzTransform
// in subjects checks only that nothing panics.
func FuzzTransformReference(f *testing.F) {
	for _, tc := range transformCases {
		f.Add(tc.src, tc.dest, "foo.ab-cd")
	}
	f.Fuzz(func(t *testing.T, src, dest, subject string) {
		compareTransform(t, src, dest, subject)
	})
}

var randomFunc = regexp.MustCompile(`(?i)random`)

// compareTransform checks one (src, dest, subject) on both engines.
func compareTransform(t *testing.T, src, dest, subject string) {
	t.Helper()
	if dest == "" {
		// The reference returns a nil transform (no mapping); we refuse.
		if _, err := subjects.NewTransform(src, dest); err == nil {
			t.Fatalf("NewTransform(%q, \"\") accepted an empty destination", src)
		}
		return
	}
	for _, strict := range []bool{false, true} {
		newRef, newOurs := natsserver.NewSubjectTransform, subjects.NewTransform
		name := "NewTransform"
		if strict {
			newRef, newOurs, name = natsserver.NewSubjectTransformStrict, subjects.NewTransformStrict, "NewTransformStrict"
		}
		ref, refErr := newRef(src, dest)
		ours, err := newOurs(src, dest)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%s(%q, %q): error %v, reference %v", name, src, dest, err, refErr)
		}
		if err != nil {
			continue
		}
		refOut, refErr := refMatch(ref, subject)
		out, err := ours.Apply(subject)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%s(%q, %q).Apply(%q) = %q, %v; reference %q, %v", name, src, dest, subject, out, err, refOut, refErr)
		}
		if err != nil {
			continue
		}
		if randomFunc.MatchString(dest) {
			// Random numbers differ; the shape must not.
			digits := regexp.MustCompile(`[0-9]+`)
			out, refOut = digits.ReplaceAllString(out, "N"), digits.ReplaceAllString(refOut, "N")
		}
		if out != refOut {
			t.Fatalf("%s(%q, %q).Apply(%q) = %q; reference %q", name, src, dest, subject, out, refOut)
		}
	}
	refErr := natsserver.ValidateMapping(src, dest)
	if err := subjects.ValidateMapping(src, dest); (err == nil) != (refErr == nil) {
		t.Fatalf("ValidateMapping(%q, %q) = %v; reference %v", src, dest, err, refErr)
	}
}

// refMatch is the reference's Match, with a panic turned into an error so
// that a reference bug is reported as a difference rather than a crash.
func refMatch(tr interface{ Match(string) (string, error) }, subject string) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reference panicked: %v", r)
		}
	}()
	return tr.Match(subject)
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// randomPattern is a source: a few literal and wildcard tokens, sometimes
// malformed.
func randomPattern(r *rand.Rand) string {
	n := 1 + r.IntN(4)
	toks := make([]string, n)
	for i := range toks {
		toks[i] = pick(r, "a", "b", "foo", "*", "*", "*", ">", "")
	}
	return strings.Join(toks, ".")
}

// randomDest is a destination mixing literals, $n and calls of every
// function with random argument lists, names and spacing.
func randomDest(r *rand.Rand) string {
	n := 1 + r.IntN(4)
	toks := make([]string, n)
	for i := range toks {
		switch r.IntN(6) {
		case 0:
			toks[i] = pick(r, "x", "y", ">", "*", "$x", "", "a b")
		case 1:
			toks[i] = fmt.Sprintf("$%d", r.IntN(5)-1)
		default:
			toks[i] = randomCall(r)
		}
	}
	return strings.Join(toks, ".")
}

func randomCall(r *rand.Rand) string {
	name := pick(r, "wildcard", "Wildcard", "partition", "splitFromLeft", "SplitFromRight",
		"slicefromleft", "sliceFromRight", "split", "Split", "left", "right", "Right",
		"random", "RANDOM", "unknown")
	nargs := r.IntN(4)
	args := make([]string, nargs)
	for i := range args {
		args[i] = pick(r, "0", "1", "2", "3", " 1", "2 ", "-1", "-", "_", "x", "", "10", "99999999999")
	}
	sp := func() string { return pick(r, "", "", " ", "\t") }
	return "{{" + sp() + name + sp() + "(" + strings.Join(args, pick(r, ",", ", ", ",\t")) + ")" + sp() + "}}"
}

// randomSubject is usually a subject src matches, else a random one.
func randomSubject(r *rand.Rand, src string) string {
	words := []string{"a", "b", "foo", "ab-cd", "-x-", "abcdefgh", "q", "é-ü"}
	if r.IntN(4) == 0 {
		n := 1 + r.IntN(4)
		toks := make([]string, n)
		for i := range toks {
			toks[i] = pick(r, words...)
		}
		return strings.Join(toks, ".")
	}
	var toks []string
	for tok := range strings.SplitSeq(src, ".") {
		switch tok {
		case "*":
			toks = append(toks, pick(r, words...))
		case ">":
			for range 1 + r.IntN(3) {
				toks = append(toks, pick(r, words...))
			}
		default:
			toks = append(toks, tok)
		}
	}
	return strings.Join(toks, ".")
}
