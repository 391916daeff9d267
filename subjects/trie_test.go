package subjects

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sub is one subscription in a test: value id under pattern in queue.
type sub struct {
	pattern, queue string
	id             int
}

// describe renders a result canonically, independent of order: plain ids
// sorted, then each group as name:[sorted members], groups sorted.
func describe(r *Result[int]) string {
	plain := slices.Clone(r.Plain)
	slices.Sort(plain)
	groups := make([]string, 0, len(r.Queues))
	for _, g := range r.Queues {
		members := slices.Clone(g.Members)
		slices.Sort(members)
		groups = append(groups, fmt.Sprintf("%s:%v", g.Name, members))
	}
	slices.Sort(groups)
	return fmt.Sprintf("plain=%v queues=%v", plain, groups)
}

func mustInsert(t *testing.T, tr *Trie[int], subs ...sub) {
	t.Helper()
	for _, s := range subs {
		if err := tr.Insert(s.pattern, s.queue, s.id); err != nil {
			t.Fatalf("Insert(%q, %q, %d): %v", s.pattern, s.queue, s.id, err)
		}
	}
}

func mustRemove(t *testing.T, tr *Trie[int], subs ...sub) {
	t.Helper()
	for _, s := range subs {
		if err := tr.Remove(s.pattern, s.queue, s.id); err != nil {
			t.Fatalf("Remove(%q, %q, %d): %v", s.pattern, s.queue, s.id, err)
		}
	}
}

func TestTrieMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		subs    []sub
		subject string
		want    string
	}{
		{"empty_trie", nil, "foo", "plain=[] queues=[]"},
		{"literal", []sub{{"foo.bar", "", 1}}, "foo.bar", "plain=[1] queues=[]"},
		{"literal_other_subject", []sub{{"foo.bar", "", 1}}, "foo.baz", "plain=[] queues=[]"},
		{"literal_is_not_prefix", []sub{{"foo", "", 1}}, "foo.bar", "plain=[] queues=[]"},
		{"literal_longer_than_subject", []sub{{"foo.bar", "", 1}}, "foo", "plain=[] queues=[]"},
		{"partial_wildcard_matches_one_token", []sub{{"foo.*", "", 1}}, "foo.bar", "plain=[1] queues=[]"},
		{"partial_wildcard_needs_a_token", []sub{{"foo.*", "", 1}}, "foo", "plain=[] queues=[]"},
		{"partial_wildcard_only_one_token", []sub{{"foo.*", "", 1}}, "foo.bar.baz", "plain=[] queues=[]"},
		{"partial_wildcard_first", []sub{{"*.bar", "", 1}}, "foo.bar", "plain=[1] queues=[]"},
		{"partial_wildcard_middle", []sub{{"a.*.c", "", 1}}, "a.b.c", "plain=[1] queues=[]"},
		{"full_wildcard_matches_rest", []sub{{"foo.>", "", 1}}, "foo.bar.baz", "plain=[1] queues=[]"},
		{"full_wildcard_matches_one", []sub{{"foo.>", "", 1}}, "foo.bar", "plain=[1] queues=[]"},
		{"full_wildcard_needs_a_token", []sub{{"foo.>", "", 1}}, "foo", "plain=[] queues=[]"},
		{"full_wildcard_alone", []sub{{">", "", 1}}, "a.b.c.d", "plain=[1] queues=[]"},
		{"mixed_wildcards", []sub{{"a.*.c.>", "", 1}}, "a.b.c.d.e", "plain=[1] queues=[]"},
		{"mixed_wildcards_miss", []sub{{"a.*.c.>", "", 1}}, "a.b.c", "plain=[] queues=[]"},
		{
			"overlapping_patterns_each_deliver",
			[]sub{{">", "", 1}, {"foo.*", "", 2}, {"foo.>", "", 3}, {"foo.bar", "", 4}, {"*.bar", "", 5}, {"*.*", "", 6}, {"foo.baz", "", 7}},
			"foo.bar", "plain=[1 2 3 4 5 6] queues=[]",
		},
		{
			"same_value_under_two_patterns_twice",
			[]sub{{"foo.*", "", 1}, {"foo.>", "", 1}}, "foo.bar", "plain=[1 1] queues=[]",
		},
		{
			"same_triple_twice_is_two_subscriptions",
			[]sub{{"foo", "", 1}, {"foo", "", 1}}, "foo", "plain=[1 1] queues=[]",
		},
		{
			"queue_group_collects_members",
			[]sub{{"foo", "q", 1}, {"foo", "q", 2}, {"foo", "", 3}}, "foo", "plain=[3] queues=[q:[1 2]]",
		},
		{
			"queue_groups_by_name",
			[]sub{{"foo", "q", 1}, {"foo", "r", 2}}, "foo", "plain=[] queues=[q:[1] r:[2]]",
		},
		{
			"queue_groups_by_pattern_and_name",
			[]sub{{"foo.*", "q", 1}, {"foo.>", "q", 2}, {"foo.*", "q", 3}}, "foo.bar", "plain=[] queues=[q:[1 3] q:[2]]",
		},
		{
			"queue_group_name_with_dots",
			[]sub{{"foo", "svc.workers", 1}}, "foo", "plain=[] queues=[svc.workers:[1]]",
		},
		{
			"wildcard_chars_inside_tokens_are_literal",
			[]sub{{"fo*", "", 1}, {"a>b", "", 2}, {"*", "", 3}}, "fo*", "plain=[1 3] queues=[]",
		},
		{
			"wildcard_chars_inside_tokens_do_not_wildcard",
			[]sub{{"fo*", "", 1}}, "foo", "plain=[] queues=[]",
		},
		{
			// PROTOCOL.md §5: a non-pedantic PUB to "foo.*" is routed
			// literally: wildcard subscriptions get it, a literal "foo.bar"
			// does not.
			"published_partial_wildcard_is_literal",
			[]sub{{">", "", 1}, {"foo.*", "", 2}, {"foo.bar", "", 3}, {"foo.>", "", 4}},
			"foo.*", "plain=[1 2 4] queues=[]",
		},
		{
			"published_full_wildcard_is_literal",
			[]sub{{">", "", 1}, {"$JS.API.CONSUMER.CREATE.S.C.*.>", "", 2}, {"$JS.API.CONSUMER.CREATE.S.C.orders.*", "", 3}, {"$JS.API.CONSUMER.CREATE.S.C.orders.x", "", 4}},
			"$JS.API.CONSUMER.CREATE.S.C.orders.>", "plain=[1 2 3] queues=[]",
		},
		{"empty_subject_matches_nothing", []sub{{">", "", 1}}, "", "plain=[] queues=[]"},
		{"double_dot_matches_nothing", []sub{{">", "", 1}, {"foo.*.bar", "", 2}}, "foo..bar", "plain=[] queues=[]"},
		{"leading_dot_matches_nothing", []sub{{">", "", 1}}, ".foo", "plain=[] queues=[]"},
		{"trailing_dot_matches_nothing", []sub{{">", "", 1}, {"foo.>", "", 2}}, "foo.", "plain=[] queues=[]"},
		{"whitespace_is_a_literal_byte_when_publishing", []sub{{">", "", 1}}, "foo bar", "plain=[1] queues=[]"},
		{
			"deep_subject_beyond_stack_tokens",
			[]sub{{"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t", "", 1}, {"a.*.c.>", "", 2}, {"*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*", "", 3}},
			"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t", "plain=[1 2 3] queues=[]",
		},
		{
			"many_literal_children_use_a_map",
			manySubs("a.%d", 20), "a.17", "plain=[17] queues=[]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTrie[int]()
			mustInsert(t, tr, tc.subs...)
			if got := tr.Count(); got != len(tc.subs) {
				t.Errorf("Count() = %d, want %d", got, len(tc.subs))
			}
			// Twice each: the first is a miss, the second a cache hit.
			for range 2 {
				if got := describe(tr.MatchString(tc.subject)); got != tc.want {
					t.Errorf("MatchString(%q) = %s, want %s", tc.subject, got, tc.want)
				}
				if got := describe(tr.Match([]byte(tc.subject))); got != tc.want {
					t.Errorf("Match(%q) = %s, want %s", tc.subject, got, tc.want)
				}
			}
		})
	}
}

// manySubs returns n plain subscriptions fmt.Sprintf(format, i) with id i.
func manySubs(format string, n int) []sub {
	subs := make([]sub, n)
	for i := range subs {
		subs[i] = sub{fmt.Sprintf(format, i), "", i}
	}
	return subs
}

func TestTrieInsertErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		pattern, queue string
		want           error
		wantText       string
	}{
		{"empty_subject", "", "", ErrBadSubject, `subjects: insert "": subjects: invalid subject`},
		{"empty_token", "foo..bar", "", ErrBadSubject, `"foo..bar"`},
		{"full_wildcard_not_last", "foo.>.bar", "", ErrBadSubject, `"foo.>.bar"`},
		{"whitespace", "foo bar", "", ErrBadSubject, `"foo bar"`},
		{"queue_with_space", "foo", "my q", ErrBadQueue, `queue "my q"`},
		{"queue_with_tab", "foo", "q\t", ErrBadQueue, `queue "q\t"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTrie[int]()
			err := tr.Insert(tc.pattern, tc.queue, 1)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Insert(%q, %q) = %v, want %v", tc.pattern, tc.queue, err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not contain %q", err, tc.wantText)
			}
			if err := tr.Remove(tc.pattern, tc.queue, 1); !errors.Is(err, tc.want) {
				t.Errorf("Remove(%q, %q) = %v, want %v", tc.pattern, tc.queue, err, tc.want)
			}
			if tr.Count() != 0 {
				t.Errorf("Count() = %d after failed insert", tr.Count())
			}
		})
	}
}

func TestTrieRemove(t *testing.T) {
	t.Parallel()

	t.Run("absent_is_not_found", func(t *testing.T) {
		t.Parallel()
		tr := NewTrie[int]()
		mustInsert(t, tr, sub{"foo.bar", "", 1}, sub{"foo.*", "q", 2})
		for _, s := range []sub{
			{"foo.bar", "", 2},     // other value
			{"foo.bar", "q", 1},    // other queue
			{"foo.*", "", 2},       // plain instead of queue
			{"foo.*", "r", 2},      // other queue name
			{"foo", "", 1},         // interior node
			{"foo.bar.baz", "", 1}, // below a leaf
			{"foo.>", "", 1},       // absent wildcard slot
		} {
			if err := tr.Remove(s.pattern, s.queue, s.id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Remove(%q, %q, %d) = %v, want ErrNotFound", s.pattern, s.queue, s.id, err)
			}
		}
		if tr.Count() != 2 {
			t.Errorf("Count() = %d, want 2", tr.Count())
		}
	})

	t.Run("removes_one_of_duplicates", func(t *testing.T) {
		t.Parallel()
		tr := NewTrie[int]()
		mustInsert(t, tr, sub{"foo", "", 1}, sub{"foo", "", 1}, sub{"foo", "q", 1}, sub{"foo", "q", 1})
		mustRemove(t, tr, sub{"foo", "", 1}, sub{"foo", "q", 1})
		if got, want := describe(tr.MatchString("foo")), "plain=[1] queues=[q:[1]]"; got != want {
			t.Errorf("after removing one of each: %s, want %s", got, want)
		}
		mustRemove(t, tr, sub{"foo", "", 1}, sub{"foo", "q", 1})
		if got := tr.MatchString("foo"); !got.Empty() {
			t.Errorf("after removing all: %s, want empty", describe(got))
		}
	})

	t.Run("last_queue_member_removes_group", func(t *testing.T) {
		t.Parallel()
		tr := NewTrie[int]()
		mustInsert(t, tr, sub{"foo", "q", 1}, sub{"foo", "r", 2}, sub{"foo", "q", 3})
		mustRemove(t, tr, sub{"foo", "q", 1}, sub{"foo", "q", 3})
		if got, want := describe(tr.MatchString("foo")), "plain=[] queues=[r:[2]]"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
}

// TestTriePrunes checks that removing every subscription leaves the root
// bare, whatever shape the trie had, so churn cannot leak nodes.
func TestTriePrunes(t *testing.T) {
	t.Parallel()
	subs := []sub{
		{"foo.bar", "", 1}, {"foo.bar.baz", "", 2}, {"foo.*", "", 3}, {"foo.>", "", 4},
		{">", "", 5}, {"*", "q", 6}, {"*.*.>", "q", 7}, {"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r", "", 8},
	}
	subs = append(subs, manySubs("_INBOX.%d", 100)...) // grows a literals map
	for _, order := range []string{"forward", "reverse"} {
		t.Run(order, func(t *testing.T) {
			t.Parallel()
			tr := NewTrie[int]()
			mustInsert(t, tr, subs...)
			removal := slices.Clone(subs)
			if order == "reverse" {
				slices.Reverse(removal)
			}
			for i, s := range removal {
				mustRemove(t, tr, s)
				if i == len(removal)/2 {
					// A map drained below maxEdges/2 goes back to a slice.
					tr.MatchString("foo.bar")
				}
			}
			if tr.Count() != 0 {
				t.Errorf("Count() = %d, want 0", tr.Count())
			}
			if !tr.root.unused() {
				t.Errorf("root not pruned: %+v", tr.root)
			}
		})
	}

	t.Run("keeps_shared_prefix", func(t *testing.T) {
		t.Parallel()
		tr := NewTrie[int]()
		mustInsert(t, tr, sub{"a.b", "", 1}, sub{"a.b.c.d", "", 2})
		mustRemove(t, tr, sub{"a.b.c.d", "", 2})
		ab := tr.root.literal("a").literal("b")
		if ab == nil || !ab.hasSubs() || ab.literal("c") != nil {
			t.Fatalf("a.b should keep its subscription and lose its c child")
		}
		mustRemove(t, tr, sub{"a.b", "", 1})
		if !tr.root.unused() {
			t.Errorf("root not pruned")
		}
	})

	t.Run("literal_map_shrinks_to_slice", func(t *testing.T) {
		t.Parallel()
		tr := NewTrie[int]()
		inboxes := manySubs("_INBOX.%d", 50)
		mustInsert(t, tr, inboxes...)
		inbox := tr.root.literal("_INBOX")
		if inbox.literals == nil {
			t.Fatalf("50 children should be in a map")
		}
		mustRemove(t, tr, inboxes[maxEdges/2:]...)
		if inbox.literals != nil || len(inbox.edges) != maxEdges/2 {
			t.Errorf("literals=%d edges=%d, want a slice of %d", len(inbox.literals), len(inbox.edges), maxEdges/2)
		}
		for _, s := range inboxes[:maxEdges/2] {
			if got := describe(tr.MatchString(s.pattern)); got != fmt.Sprintf("plain=[%d] queues=[]", s.id) {
				t.Errorf("MatchString(%q) = %s after shrink", s.pattern, got)
			}
		}
	})
}

// TestTrieCacheInvalidation checks that the cache answers like the trie
// after each change, and that a change drops only what it must.
func TestTrieCacheInvalidation(t *testing.T) {
	t.Parallel()
	tr := NewTrie[int]()
	subjects := []string{"foo.bar", "foo.baz", "other.thing", "_INBOX.1", "_INBOX.2"}
	warm := func() {
		for _, s := range subjects {
			tr.MatchString(s)
		}
	}
	check := func(step, subject, want string) {
		t.Helper()
		if got := describe(tr.MatchString(subject)); got != want {
			t.Errorf("%s: MatchString(%q) = %s, want %s", step, subject, got, want)
		}
	}

	warm()
	mustInsert(t, tr, sub{"foo.bar", "", 1})
	check("literal insert", "foo.bar", "plain=[1] queues=[]")
	check("literal insert", "foo.baz", "plain=[] queues=[]")

	warm()
	mustInsert(t, tr, sub{"foo.*", "q", 2})
	check("wildcard insert", "foo.bar", "plain=[1] queues=[q:[2]]")
	check("wildcard insert", "foo.baz", "plain=[] queues=[q:[2]]")

	warm()
	mustInsert(t, tr, sub{">", "", 3})
	for _, s := range subjects[2:] {
		check("full wildcard insert", s, "plain=[3] queues=[]")
	}

	warm()
	mustRemove(t, tr, sub{"foo.*", "q", 2})
	check("wildcard remove", "foo.baz", "plain=[3] queues=[]")

	// A literal change leaves unrelated cached results in place.
	warm()
	before := tr.MatchString("other.thing")
	mustInsert(t, tr, sub{"_INBOX.1", "", 4})
	mustRemove(t, tr, sub{"_INBOX.1", "", 4})
	if after := tr.MatchString("other.thing"); after != before {
		t.Errorf("a literal insert and remove on _INBOX.1 evicted other.thing")
	}
	check("literal remove", "_INBOX.1", "plain=[3] queues=[]")

	// A wildcard change leaves non-matching cached results in place.
	mustInsert(t, tr, sub{"_INBOX.*", "", 5})
	if after := tr.MatchString("other.thing"); after != before {
		t.Errorf("an insert of _INBOX.* evicted other.thing")
	}
	check("inbox wildcard", "_INBOX.2", "plain=[3 5] queues=[]")

	// A failed remove changes nothing.
	if err := tr.Remove("other.thing", "", 99); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Remove absent: %v", err)
	}
	if after := tr.MatchString("other.thing"); after != before {
		t.Errorf("a failed remove evicted other.thing")
	}
}

// TestTrieCacheBounded fills the cache far past its size and checks that
// it stays within bounds and still answers correctly.
func TestTrieCacheBounded(t *testing.T) {
	t.Parallel()
	tr := NewTrie[int]()
	mustInsert(t, tr, sub{"a.*", "", 1})
	const n = 3 * cacheShards * cacheShardSize
	for i := range n {
		s := fmt.Sprintf("a.%d", i)
		for range 2 { // stored on its second match (see Admission)
			if got := tr.MatchString(s); len(got.Plain) != 1 {
				t.Fatalf("MatchString(%q) = %s", s, describe(got))
			}
		}
	}
	total := 0
	for i := range tr.cache.shards {
		size := len(tr.cache.shards[i].results)
		if size > cacheShardSize {
			t.Errorf("shard %d holds %d results, bound is %d", i, size, cacheShardSize)
		}
		if size == 0 {
			t.Errorf("shard %d is empty: the hash does not spread subjects", i)
		}
		total += size
	}
	if total < cacheShards*cacheShardSize/2 {
		t.Errorf("cache holds %d results after %d distinct subjects; shards are unbalanced", total, n)
	}
}

func TestTrieMatchCachedDoesNotAllocate(t *testing.T) {
	tr := NewTrie[int]()
	mustInsert(t, tr, sub{"orders.*.created", "", 1}, sub{"orders.>", "q", 2}, sub{">", "", 3})
	subject := []byte("orders.eu.created")
	tr.Match(subject) // fill the cache
	if allocs := testing.AllocsPerRun(1000, func() { tr.Match(subject) }); allocs != 0 {
		t.Errorf("Match on a cache hit: %v allocs per run, want 0", allocs)
	}
	if allocs := testing.AllocsPerRun(1000, func() { tr.MatchString("orders.eu.created") }); allocs != 0 {
		t.Errorf("MatchString on a cache hit: %v allocs per run, want 0", allocs)
	}
	bad := []byte("orders..created")
	if allocs := testing.AllocsPerRun(1000, func() { tr.Match(bad) }); allocs != 0 {
		t.Errorf("Match on a malformed subject: %v allocs per run, want 0", allocs)
	}
}

// TestTrieResultIsSnapshot checks that a result handed out earlier is not
// changed by later subscription changes.
func TestTrieResultIsSnapshot(t *testing.T) {
	t.Parallel()
	tr := NewTrie[int]()
	mustInsert(t, tr, sub{"foo", "", 1}, sub{"foo", "", 2}, sub{"foo", "q", 3}, sub{"foo", "q", 4})
	r := tr.MatchString("foo")
	want := describe(r)
	mustRemove(t, tr, sub{"foo", "", 1}, sub{"foo", "q", 3})
	mustInsert(t, tr, sub{"foo", "", 5}, sub{"foo", "q", 6})
	if got := describe(r); got != want {
		t.Errorf("old result changed from %s to %s", want, got)
	}
}

func TestZeroTrieIsUsable(t *testing.T) {
	t.Parallel()
	var tr Trie[string]
	if !tr.MatchString("foo").Empty() {
		t.Fatal("zero trie matched something")
	}
	if err := tr.Insert("foo", "", "a"); err != nil {
		t.Fatal(err)
	}
	if got := tr.MatchString("foo").Plain; !slices.Equal(got, []string{"a"}) {
		t.Errorf("Plain = %v, want [a]", got)
	}
	var nilResult *Result[string]
	if !nilResult.Empty() {
		t.Errorf("nil result is not empty")
	}
}

func TestHashBytesEqualsHashString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "a", "foo.bar", "12345678", "123456789", "$JS.API.CONSUMER.CREATE.S.C.orders.>"} {
		if hb, hs := hashBytes([]byte(s)), hashString(s); hb != hs {
			t.Errorf("%q: hashBytes %x != hashString %x", s, hb, hs)
		}
	}
}
