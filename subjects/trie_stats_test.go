package subjects

import (
	"strconv"
	"testing"
)

func TestTrieStats(t *testing.T) {
	t.Parallel()
	tr := NewTrie[int]()
	for i, p := range []string{"a.b", "a.*", "c"} {
		if err := tr.Insert(p, "", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Insert("a.b", "q", 9); err != nil {
		t.Fatal(err)
	}
	if err := tr.Remove("c", "", 2); err != nil {
		t.Fatal(err)
	}
	tr.MatchString("a.b")   // miss: plain a.b, a.* and group q; remembered
	tr.MatchString("a.b")   // miss again: now stored
	tr.MatchString("a.b")   // hit
	tr.Match([]byte("a.x")) // miss, remembered only
	st := tr.Stats()
	want := Stats{Subscriptions: 3, Inserts: 4, Removes: 1, Matches: 4, CacheHits: 1, CacheEntries: 1, MaxFanout: 3, AvgFanout: 3}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
}

// Subjects matched once (replies, acks to inboxes) are not stored; one
// that repeats is, from its second match on, and then hits.
func TestCacheAdmitsOnlySubjectsThatRepeat(t *testing.T) {
	t.Parallel()
	tr := NewTrie[int]()
	if err := tr.Insert("_INBOX.>", "", 1); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if r := tr.Match([]byte("_INBOX.r." + strconv.Itoa(i))); len(r.Plain) != 1 {
			t.Fatalf("match %d: %+v", i, r)
		}
	}
	if st := tr.Stats(); st.CacheEntries != 0 || st.CacheHits != 0 {
		t.Fatalf("subjects matched once were stored: %+v", st)
	}
	for range 3 {
		if r := tr.MatchString("_INBOX.hot"); len(r.Plain) != 1 {
			t.Fatalf("hot subject: %+v", r)
		}
	}
	if st := tr.Stats(); st.CacheEntries != 1 || st.CacheHits != 1 {
		t.Fatalf("a repeated subject: %+v, want stored once and hit once", st)
	}
}
