package subjects

import "testing"

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
	tr.MatchString("a.b") // miss: plain a.b, a.* and group q
	tr.MatchString("a.b") // hit
	tr.Match([]byte("a.x"))
	st := tr.Stats()
	want := Stats{Subscriptions: 3, Inserts: 4, Removes: 1, Matches: 3, CacheHits: 1, CacheEntries: 2, MaxFanout: 3, AvgFanout: 2}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
}
