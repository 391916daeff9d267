package subjects

import "strings"

// Reach returns a pattern that matches every subject Apply can return: the
// destination with each single-token function (wildcard, partition, left,
// right, random) as "*", and everything from the first function that can
// write several tokens (the splits and slices) on as ">". A permission
// check of what a transform may produce (docs/security.md: republish and
// source transforms are checked against their owner's publish and read
// rights) asks about this one pattern instead of every output.
func (t *Transform) Reach() string {
	if t.identity {
		return ">"
	}
	toks := make([]string, 0, len(t.parts))
	for i := range t.parts {
		p := &t.parts[i]
		switch p.fn {
		case fnLiteral:
			toks = append(toks, p.literal) // ">" only last: the tail
		case fnWildcard, fnPartition, fnLeft, fnRight, fnRandom:
			toks = append(toks, "*")
		default:
			return strings.Join(append(toks, ">"), ".")
		}
	}
	return strings.Join(toks, ".")
}
