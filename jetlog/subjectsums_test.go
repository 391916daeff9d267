package jetlog

import "testing"

// TestSubjectSums checks both layouts the same way: dense ids (a slice)
// and ids spread too thin for one (a map).
func TestSubjectSums(t *testing.T) {
	for name, ids := range map[string][]uint64{
		"dense":  {0, 1, 2, 5},
		"sparse": {0, 1, 2, 1 << 40},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := newSubjectSums(ids)
			if err != nil {
				t.Fatal(err)
			}
			if (s.sparse == nil) != (name == "dense") {
				t.Fatalf("layout: sparse=%v", s.sparse != nil)
			}
			last := ids[len(ids)-1]
			if !s.add(last, 3) || !s.add(last, 4) || !s.add(0, 1) {
				t.Fatal("add refused a listed id")
			}
			if s.add(3, 1) || s.add(last+1, 1) {
				t.Fatal("add took an id not listed")
			}
			if s.sum(last) != 7 || s.sum(0) != 1 || s.sum(1) != 0 || s.sum(3) != 0 {
				t.Fatalf("sums: %d %d %d %d", s.sum(last), s.sum(0), s.sum(1), s.sum(3))
			}
			if _, err := newSubjectSums(append(ids, ids[1])); err == nil {
				t.Fatal("an id listed twice was accepted")
			}
		})
	}
}
