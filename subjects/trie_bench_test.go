package subjects

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
)

// literalTrie holds n plain subscriptions "orders.<i>.created" with id i.
func literalTrie(tb testing.TB, n int) *Trie[int] {
	tb.Helper()
	tr := NewTrie[int]()
	for i := range n {
		if err := tr.Insert("orders."+strconv.Itoa(i)+".created", "", i); err != nil {
			tb.Fatal(err)
		}
	}
	return tr
}

// wildcardTrie is literalTrie plus the wildcard subscriptions a real system
// has next to them: monitors, a queue group of workers, a catch-all.
func wildcardTrie(tb testing.TB, n int) *Trie[int] {
	tb.Helper()
	tr := literalTrie(tb, n)
	for _, s := range []sub{
		{"orders.*.created", "", -1},
		{"orders.>", "", -2},
		{"*.*.created", "", -3},
		{">", "", -4},
		{"orders.*.created", "workers", -5},
		{"orders.*.created", "workers", -6},
		{"orders.*.shipped", "", -7},
	} {
		if err := tr.Insert(s.pattern, s.queue, s.id); err != nil {
			tb.Fatal(err)
		}
	}
	return tr
}

// subjectsFor returns n distinct published subjects hitting literalTrie.
func subjectsFor(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte("orders." + strconv.Itoa(i) + ".created")
	}
	return out
}

// BenchmarkMatchLiteral measures the trie walk alone (no cache) for a
// subject that meets only a literal subscription.
func BenchmarkMatchLiteral(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run("subs="+strconv.Itoa(n), func(b *testing.B) {
			tr := literalTrie(b, n)
			subject := "orders." + strconv.Itoa(n/2) + ".created"
			b.ReportAllocs()
			for b.Loop() {
				tr.walk(subject)
			}
		})
	}
}

// BenchmarkMatchWildcard measures the trie walk alone (no cache) for a
// subject that meets a literal, four wildcard and one queue subscription.
func BenchmarkMatchWildcard(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run("subs="+strconv.Itoa(n), func(b *testing.B) {
			tr := wildcardTrie(b, n)
			subject := "orders." + strconv.Itoa(n/2) + ".created"
			b.ReportAllocs()
			for b.Loop() {
				tr.walk(subject)
			}
		})
	}
}

// BenchmarkMatchCached is the publish hot path: a subject whose result is
// in the cache. It must not allocate (TestTrieMatchCachedDoesNotAllocate).
func BenchmarkMatchCached(b *testing.B) {
	tr := wildcardTrie(b, 100_000)
	subject := []byte("orders.50000.created")
	tr.Match(subject)
	tr.Match(subject) // stored on its second miss
	b.ReportAllocs()
	b.SetBytes(int64(len(subject)))
	for b.Loop() {
		tr.Match(subject)
	}
}

// BenchmarkMatchUncached cycles through more distinct subjects than the
// cache remembers, so every Match walks the trie and allocates the
// result; the cache stores none of them (each is seen once in a while:
// see Admission in cache.go), as with replies and acks to inboxes.
func BenchmarkMatchUncached(b *testing.B) {
	const n = 100_000
	tr := wildcardTrie(b, n)
	subjects := subjectsFor(n)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tr.Match(subjects[i%n])
		i += 7919 // a prime stride, so consecutive subjects differ widely
	}
}

// BenchmarkMatchParallel has every CPU publish to a small set of hot
// subjects at once: read locks and cache shards must not serialise them.
func BenchmarkMatchParallel(b *testing.B) {
	tr := wildcardTrie(b, 100_000)
	subjects := subjectsFor(64)
	for _, s := range subjects {
		tr.Match(s)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) * 13
		for pb.Next() {
			tr.Match(subjects[i%len(subjects)])
			i++
		}
	})
}

// BenchmarkInsertRemove is subscription churn with a full cache:
// request-reply inboxes (literal: one cache lookup to invalidate) and a
// wildcard (scans the whole cache).
func BenchmarkInsertRemove(b *testing.B) {
	for _, pattern := range []string{"_INBOX.kd93jf8sl2.42", "_INBOX.kd93jf8sl2.*"} {
		b.Run("pattern="+pattern, func(b *testing.B) {
			tr := wildcardTrie(b, 100_000)
			for _, s := range subjectsFor(cacheShards * cacheShardSize) {
				tr.Match(s)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := tr.Insert(pattern, "", 1); err != nil {
					b.Fatal(err)
				}
				if err := tr.Remove(pattern, "", 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// millionTrie holds 1M subscriptions: 990k literals "a.<i>.b" and 10k
// wildcards "a.*.<j>" and "a.<j>.>", half of those in queue groups.
func millionTrie(tb testing.TB) *Trie[int] {
	tb.Helper()
	tr := NewTrie[int]()
	const literals = 990_000
	for i := range literals {
		if err := tr.Insert("a."+strconv.Itoa(i)+".b", "", i); err != nil {
			tb.Fatal(err)
		}
	}
	for j := range 5_000 {
		queue := ""
		if j%2 == 0 {
			queue = "q"
		}
		if err := tr.Insert("a.*."+strconv.Itoa(j), queue, literals+2*j); err != nil {
			tb.Fatal(err)
		}
		if err := tr.Insert("a."+strconv.Itoa(j)+".>", queue, literals+2*j+1); err != nil {
			tb.Fatal(err)
		}
	}
	return tr
}

// BenchmarkMatchMillion matches against 1M subscriptions, cache bypassed
// and through the cache.
func BenchmarkMatchMillion(b *testing.B) {
	tr := millionTrie(b)
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			tr.walk("a." + strconv.Itoa(i%5_000) + ".b")
			i++
		}
	})
	b.Run("cached", func(b *testing.B) {
		subject := []byte("a.4242.b")
		tr.Match(subject)
		b.ReportAllocs()
		for b.Loop() {
			tr.Match(subject)
		}
	})
}

// TestTrieMillionSubscriptions inserts 1M subscriptions, checks matches
// and memory, then removes them all and checks the trie is bare again.
func TestTrieMillionSubscriptions(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("1M subscriptions: skipped with -short and -race")
	}
	before := heapInUse()
	tr := millionTrie(t)
	after := heapInUse()
	if tr.Count() != 1_000_000 {
		t.Fatalf("Count() = %d", tr.Count())
	}
	perSub := float64(after-before) / 1e6
	t.Logf("heap: %.0f MB for 1M subscriptions, %.0f bytes each", float64(after-before)/1e6, perSub)
	// Measured about 290 B; the bound catches a representation regression
	// (a map per node roughly doubles it).
	if perSub > 400 {
		t.Errorf("%.0f bytes per subscription, want at most 400", perSub)
	}

	for _, tc := range []struct{ subject, want string }{
		{"a.4242.b", "plain=[4242] queues=[q:[998485]]"},
		{"a.4243.4242", "plain=[998487] queues=[q:[998484]]"},
		{"a.989999.b", "plain=[989999] queues=[]"},
		{"a.b.c", "plain=[] queues=[]"},
	} {
		for range 2 {
			if got := describe(tr.MatchString(tc.subject)); got != tc.want {
				t.Errorf("MatchString(%q) = %s, want %s", tc.subject, got, tc.want)
			}
		}
	}

	for i := range 990_000 {
		if err := tr.Remove("a."+strconv.Itoa(i)+".b", "", i); err != nil {
			t.Fatal(err)
		}
	}
	for j := range 5_000 {
		queue := ""
		if j%2 == 0 {
			queue = "q"
		}
		if err := tr.Remove("a.*."+strconv.Itoa(j), queue, 990_000+2*j); err != nil {
			t.Fatal(err)
		}
		if err := tr.Remove("a."+strconv.Itoa(j)+".>", queue, 990_000+2*j+1); err != nil {
			t.Fatal(err)
		}
	}
	if tr.Count() != 0 || !tr.root.unused() {
		t.Fatalf("trie not empty after removing everything: Count() = %d", tr.Count())
	}
	runtime.KeepAlive(tr)
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
