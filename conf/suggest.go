package conf

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// unknownKey is the error for a key of a nested block that is not one of
// the block's: "unknown key", with a hint from the block's keys when one
// is close (jetstream { store_dri } → did you mean "store_dir"?).
func unknownKey(name string, keys []string) error {
	if h := hint(name, keys); h != "" {
		return errors.New("unknown key, " + h)
	}
	return errors.New("unknown key")
}

// sortedKeys are a block's key names in order, so that hints are the same
// on every run.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// hint returns `did you mean "x"?` for the candidate closest to name, or ""
// when none is close: for names of four or more letters the only candidate
// starting with it (max_pings: max_pings_out, not mappings); else within
// two edits (a swap of neighbours counts as one); else the only candidate
// containing it.
func hint(name string, candidates []string) string {
	lower := strings.ToLower(name)
	best, bestDist := "", 3
	var containing, prefixed []string
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if len(lower) >= 4 && strings.HasPrefix(lc, lower) && lc != lower {
			prefixed = append(prefixed, c)
		}
		if d := editDistance(lower, lc); d < bestDist && d < len(lower) {
			best, bestDist = c, d
		}
		if len(lower) >= 4 && strings.Contains(lc, lower) {
			containing = append(containing, c)
		}
	}
	if len(prefixed) == 1 {
		best = prefixed[0]
	}
	if best == "" && len(containing) == 1 {
		best = containing[0]
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
