package subjects

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// The reference's behaviour is pinned case by case in
// tests/transform_diff_test.go; these tables state what each form does.

func TestTransformApply(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, dest, subject, want string
	}{
		{"literal_to_literal", "foo", "bar", "foo", "bar"},
		{"legacy_wildcards_reordered", "foo.*.*", "bar.$2.$1", "foo.a.b", "bar.b.a"},
		{"legacy_wildcard_twice", "foo.*.*", "bar.$1.$1", "foo.a.b", "bar.a.a"},
		{"wildcard_function", "foo.*", "x.{{wildcard(1)}}", "foo.a", "x.a"},
		{"wildcard_function_capitalised_and_spaced", "foo.*", "{{ Wildcard ( 1 ) }}", "foo.a", "a"},
		{"index_zero_reads_first_token", "foo.*", "x.$0", "foo.a", "x.foo"},
		{"dollar_word_is_literal", "foo.*", "$x.$1", "foo.a", "$x.a"},
		{"full_wildcard_tail", "foo.>", "bar.>", "foo.a.b.c", "bar.a.b.c"},
		{"wildcard_and_tail", "*.>", "$1.x.>", "a.b.c", "a.x.b.c"},
		{"prefix_everything", ">", "pre.>", "a.b", "pre.a.b"},
		{"identity", ">", ">", "a.b", "a.b"},
		{"empty_source_is_everything", "", "pre.>", "a", "pre.a"},
		{"split_from_left", "foo.*", "{{splitFromLeft(1,2)}}", "foo.abcdef", "ab.cdef"},
		{"split_from_left_too_far", "foo.*", "{{splitFromLeft(1,6)}}", "foo.abcdef", "abcdef"},
		{"split_from_right", "foo.*", "{{splitFromRight(1,2)}}", "foo.abcdef", "abcd.ef"},
		{"slice_from_left", "foo.*", "{{sliceFromLeft(1,4)}}", "foo.abcdefghij", "abcd.efgh.ij"},
		{"slice_from_right", "foo.*", "{{sliceFromRight(1,4)}}", "foo.abcdefghij", "ab.cdef.ghij"},
		{"slice_exact", "foo.*", "{{sliceFromRight(1,2)}}", "foo.abcd", "ab.cd"},
		{"split_on_dash", "foo.*", "{{split(1,-)}}", "foo.a-b-c", "a.b.c"},
		{"split_drops_empty_pieces", "foo.*", "{{split(1,-)}}", "foo.-a--b-", "a.b"},
		{"split_on_nothing_cuts_runes", "foo.*", "{{split(1,)}}", "foo.aé", "a.é"},
		{"left", "foo.*", "{{left(1,2)}}", "foo.abcd", "ab"},
		{"left_too_long", "foo.*", "{{left(1,9)}}", "foo.abcd", "abcd"},
		{"right", "foo.*", "{{right(1,2)}}", "foo.abcd", "cd"},
		// fnv32a("alice") % 3 and fnv32a("foo.alice") % 3, as in the reference.
		{"partition_of_token", "foo.*", "p.{{partition(3,1)}}", "foo.alice", "p." + strconv.Itoa(int(fnvOf("alice")%3))},
		{"partition_of_subject", "foo.*", "p.{{partition(3)}}", "foo.alice", "p." + strconv.Itoa(int(fnvOf("foo.alice")%3))},
		{"partition_of_tokens_concatenated", "a.*.*", "{{partition(100,2,1)}}", "a.x.y", strconv.Itoa(int(fnvOf("yx") % 100))},
		{"partition_of_literal_source", "foo", "foo.{{partition(5)}}", "foo", "foo." + strconv.Itoa(int(fnvOf("foo")%5))},
		{"partition_zero", "foo.*", "{{partition(0,1)}}", "foo.a", "0"},
		{"random_zero", "foo.*", "{{random(0)}}", "foo.a", "0"},
		{"star_prefixed_source_token_matches_any", "*x", "y", "q", "y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, err := NewTransform(tc.src, tc.dest)
			if err != nil {
				t.Fatalf("NewTransform(%q, %q): %v", tc.src, tc.dest, err)
			}
			got, err := tr.Apply(tc.subject)
			if err != nil || got != tc.want {
				t.Fatalf("Apply(%q) = %q, %v; want %q", tc.subject, got, err, tc.want)
			}
			if reach := tr.Reach(); !Matches(reach, got) {
				t.Fatalf("Reach() = %q does not match the output %q", reach, got)
			}
		})
	}
}

func fnvOf(s string) uint32 { return fnv1a(fnvOffset, s) }

func TestTransformRandomInRange(t *testing.T) {
	t.Parallel()
	tr, err := NewTransform("foo.*", "r.{{random(4)}}.$1")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 1000 {
		got, err := tr.Apply("foo.a")
		if err != nil {
			t.Fatal(err)
		}
		seen[got] = true
	}
	for s := range seen {
		if s != "r.0.a" && s != "r.1.a" && s != "r.2.a" && s != "r.3.a" {
			t.Fatalf("random(4) gave %q", s)
		}
	}
	if len(seen) != 4 {
		t.Fatalf("random(4) over 1000 tries gave only %v", seen)
	}
}

func TestTransformApplyRefuses(t *testing.T) {
	t.Parallel()
	tr, err := NewTransform("foo.*", "bar.$1")
	if err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"foo", "foo.a.b", "bar.a", "foo.*", "foo.>", "foo.", "", ".foo.a"} {
		if got, err := tr.Apply(subject); !errors.Is(err, ErrNoMatch) {
			t.Errorf("Apply(%q) = %q, %v; want ErrNoMatch", subject, got, err)
		}
	}
}

// ApplyLiteral takes a published subject's "*" and ">" tokens as plain
// tokens, which only the source's wildcards match, as an import carries
// nats.go's CONSUMER.CREATE.<stream>.<name>.<filter>.
func TestTransformApplyLiteral(t *testing.T) {
	t.Parallel()
	tr, err := NewTransform("fromA.>", "$JS.API.>")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.ApplyLiteral("fromA.CONSUMER.CREATE.KV_b.x.$KV.b.>")
	if err != nil || got != "$JS.API.CONSUMER.CREATE.KV_b.x.$KV.b.>" {
		t.Errorf("ApplyLiteral = %q, %v", got, err)
	}
	star, err := NewTransform("foo.*.bar", "x.$1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := star.ApplyLiteral("foo.*.bar"); err != nil || got != "x.*" {
		t.Errorf("ApplyLiteral(foo.*.bar) = %q, %v", got, err)
	}
	lit, err := NewTransform("foo.a", "bar")
	if err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"foo.*", "foo.>", "foo..a", "", "foo.a."} {
		if got, err := lit.ApplyLiteral(subject); !errors.Is(err, ErrNoMatch) {
			t.Errorf("ApplyLiteral(%q) = %q, %v; want ErrNoMatch", subject, got, err)
		}
	}
}

func TestNewTransformRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, dest string
		want            error
	}{
		{"empty_destination", "foo", "", ErrBadPattern},
		{"empty_token", "foo..bar", "x", ErrBadPattern},
		{"token_after_full_wildcard", "foo.>.x", "x", ErrBadPattern},
		{"star_in_destination", "foo.*", "bar.*", ErrBadPattern},
		{"full_wildcard_in_destination_only", "foo", "bar.>", ErrBadPattern},
		{"full_wildcard_in_source_only", "foo.>", "bar", ErrBadPattern},
		{"index_beyond_wildcards", "foo.*", "bar.$2", ErrIndexOutOfRange},
		{"function_index_beyond_wildcards", "foo.*", "{{left(2,1)}}", ErrIndexOutOfRange},
		{"wildcard_with_literal_source", "foo", "$1", ErrIndexOutOfRange},
		{"split_with_literal_source", "foo", "{{split(1,-)}}", ErrIndexOutOfRange},
		{"unknown_function", "foo.*", "{{upper(1)}}", ErrUnknownFunction},
		{"all_capitals", "foo.*", "{{WILDCARD(1)}}", ErrUnknownFunction},
		{"wildcard_no_args", "foo.*", "{{wildcard()}}", ErrNotEnoughArgs},
		{"wildcard_two_args", "foo.*", "{{wildcard(1,2)}}", ErrTooManyArgs},
		{"wildcard_not_a_number", "foo.*", "{{wildcard(x)}}", ErrInvalidArg},
		{"partition_count_too_big", "foo.*", "{{partition(2147483648,1)}}", ErrInvalidArg},
		{"partition_index_not_a_number", "foo.*", "{{partition(3,x)}}", ErrInvalidArg},
		{"slice_one_arg", "foo.*", "{{sliceFromLeft(1)}}", ErrNotEnoughArgs},
		{"slice_three_args", "foo.*", "{{sliceFromLeft(1,2,3)}}", ErrTooManyArgs},
		{"slice_size_beyond_int32", "foo.*", "{{sliceFromLeft(1,2147483648)}}", ErrInvalidArg},
		{"split_separator_with_space", "foo.*", "{{split(1,- )}}", ErrInvalidArg},
		{"random_two_args", "foo.*", "{{random(1,2)}}", ErrNotEnoughArgs},
		{"newline_in_arguments", "foo.*", "{{wildcard(1\n)}}", ErrUnknownFunction},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, err := NewTransform(tc.src, tc.dest)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrBadTransform) {
				t.Fatalf("NewTransform(%q, %q) = %v, %v; want %v", tc.src, tc.dest, tr, err, tc.want)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tc.dest)) {
				t.Errorf("error %q does not name the destination", err)
			}
		})
	}
}

func TestNewTransformStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src, dest string
		want      error // nil: accepted
	}{
		{"foo.*.*", "bar.$2.$1", nil},
		{"foo.*.*", "bar.{{wildcard(1)}}.{{wildcard(2)}}", nil},
		{"foo.*.*", "bar.$1.$1", nil}, // the reference counts references, not wildcards
		{"foo.*.*", "bar.$1", ErrUnusedWildcard},
		{"foo.*", "{{partition(3,1)}}", ErrNotReversible},
		{"foo.*", "$1.{{random(3)}}", ErrNotReversible},
		{"foo", "{{partition(3)}}", nil}, // a literal source is not checked
	} {
		_, err := NewTransformStrict(tc.src, tc.dest)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("NewTransformStrict(%q, %q) = %v; want %v", tc.src, tc.dest, err, tc.want)
		}
		if _, err := NewTransform(tc.src, tc.dest); err != nil {
			t.Errorf("NewTransform(%q, %q) = %v; want it accepted", tc.src, tc.dest, err)
		}
	}
}

func TestValidateMapping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src, dest string
		ok        bool
	}{
		{"foo.*", "bar.$1", true},
		{"foo.*", "", true}, // no transform
		{"foo.*", "a b.$1", false},
		{"foo.*", "x.{{ wildcard(1) }}", true},
		{"foo.*", "x.{{nope(1)}}", false},
		{"foo.*", "x.$2", false},
		{"foo", "x..y", false},
	} {
		if err := ValidateMapping(tc.src, tc.dest); (err == nil) != tc.ok {
			t.Errorf("ValidateMapping(%q, %q) = %v; want ok=%v", tc.src, tc.dest, err, tc.ok)
		}
	}
}

func TestTransformAccessors(t *testing.T) {
	t.Parallel()
	tr, err := NewTransform("", "x.>")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Source() != ">" || tr.Dest() != "x.>" || tr.String() != "> -> x.>" {
		t.Fatalf("Source %q, Dest %q, String %q", tr.Source(), tr.Dest(), tr.String())
	}
}

// TestTransformApplyAllocs pins Apply to the result string alone (none for
// a literal destination). see BenchmarkTransformApply
func TestTransformApplyAllocs(t *testing.T) {
	for _, tc := range benchTransforms {
		tr, err := NewTransform(tc.src, tc.dest)
		if err != nil {
			t.Fatal(err)
		}
		want := 1.0
		if tr.literal {
			want = 0
		}
		got := testing.AllocsPerRun(100, func() {
			if _, err := tr.Apply(tc.subject); err != nil {
				t.Fatal(err)
			}
		})
		if got > want {
			t.Errorf("%s: Apply allocates %v times, want %v", tc.name, got, want)
		}
	}
}

var benchTransforms = []struct{ name, src, dest, subject string }{
	{"literal", "orders", "billing", "orders"},
	{"wildcards", "orders.*.*", "billing.$2.$1", "orders.eu.alice"},
	{"tail", "orders.>", "archive.>", "orders.eu.alice.created"},
	{"partition", "orders.*.*", "orders.{{partition(16,2)}}.$1.$2", "orders.eu.alice"},
	{"split", "orders.*", "o.{{split(1,-)}}", "orders.eu-west-1"},
	{"slice", "orders.*", "o.{{sliceFromLeft(1,3)}}", "orders.abcdefghij"},
}

func BenchmarkTransformApply(b *testing.B) {
	for _, tc := range benchTransforms {
		tr, err := NewTransform(tc.src, tc.dest)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tr.Apply(tc.subject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestTransformReach(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, dest, want string }{
		{"secret.>", "pub.>", "pub.>"},
		{">", ">", ">"},
		{"a.*.*", "b.$2.{{wildcard(1)}}", "b.*.*"},
		{"a.*", "p.{{partition(3,1)}}.x", "p.*.x"},
		{"a.*", "s.{{split(1,-)}}.x", "s.>"},
		{"a", "b", "b"},
	} {
		tr, err := NewTransform(tc.src, tc.dest)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Reach(); got != tc.want {
			t.Errorf("%s: Reach() = %q, want %q", tr, got, tc.want)
		}
	}
}
