package server

import (
	"cmp"
	"slices"
)

func sortSeqs(s []uint64) { slices.Sort(s) }

func sortBy[T any, K cmp.Ordered](s []T, key func(T) K) {
	slices.SortFunc(s, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
}
