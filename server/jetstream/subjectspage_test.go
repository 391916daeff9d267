package jetstream

import (
	"maps"
	"slices"
	"testing"
)

func TestSubjectsPage(t *testing.T) {
	counts := map[string]uint64{"a.1": 1, "a.2": 2, "a.10": 10, "b": 3, "c": 4}
	for _, tc := range []struct {
		name          string
		offset, limit int
		want          []string
	}{
		{"fits from the start", 0, 5, []string{"a.1", "a.10", "a.2", "b", "c"}},
		{"first page in byte order", 0, 2, []string{"a.1", "a.10"}},
		{"middle page", 2, 2, []string{"a.2", "b"}},
		{"last page is short", 4, 2, []string{"c"}},
		{"offset at the end", 5, 2, nil},
		{"offset past the end", 9, 100, nil},
		{"offset under a big limit", 3, 100, []string{"b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := subjectsPage(maps.Clone(counts), tc.offset, tc.limit)
			if got := slices.Sorted(maps.Keys(page)); !slices.Equal(got, tc.want) {
				t.Fatalf("subjects %v, want %v", got, tc.want)
			}
			for subj, n := range page {
				if n != counts[subj] {
					t.Errorf("%s: count %d, want %d", subj, n, counts[subj])
				}
			}
		})
	}
}
