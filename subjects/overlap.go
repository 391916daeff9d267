package subjects

import "strings"

// Overlap reports whether some published subject would match both
// patterns: two streams may not capture the same subject, and a consumer
// filter must lie inside its stream. Invalid patterns overlap nothing. It
// does not allocate.
func Overlap(a, b string) bool {
	if !ValidSubject(a) || !ValidSubject(b) {
		return false
	}
	for {
		at, arest, amore := strings.Cut(a, ".")
		bt, brest, bmore := strings.Cut(b, ".")
		if at == ">" || bt == ">" {
			return true // valid patterns have ">" last only, and ">" takes one or more
		}
		if at != "*" && bt != "*" && at != bt {
			return false
		}
		if !amore || !bmore {
			return amore == bmore
		}
		a, b = arest, brest
	}
}

// Overlapping calls visit with the value of every subscription whose
// pattern overlaps pattern (see Overlap), until visit returns false. The
// walk costs what the overlapping part of the trie costs, not a pass over
// every subscription, so checking a new stream's subjects against all the
// others is not quadratic. visit runs with the trie's read lock held: it
// must not call the trie. An invalid pattern visits nothing.
func (t *Trie[T]) Overlapping(pattern string, visit func(v T) bool) {
	if !ValidSubject(pattern) {
		return
	}
	var buf [maxStackTokens]string
	tokens := split(pattern, buf[:0])
	t.mu.RLock()
	defer t.mu.RUnlock()
	overlapLevel(&t.root, tokens, visit)
}

// overlapLevel visits the subscriptions below n that overlap tokens; it
// returns false once visit asked to stop.
func overlapLevel[T comparable](n *node[T], tokens []string, visit func(T) bool) bool {
	if len(tokens) == 0 {
		return visitNode(n, visit)
	}
	// A ">" subscription here takes the one or more tokens left.
	if n.fwc != nil && !visitNode(n.fwc, visit) {
		return false
	}
	tok, rest := tokens[0], tokens[1:]
	switch tok {
	case ">": // everything deeper than n overlaps
		return n.eachChild(func(c *node[T]) bool { return c == n.fwc || visitSubtree(c, visit) })
	case "*":
		return n.eachChild(func(c *node[T]) bool { return c == n.fwc || overlapLevel(c, rest, visit) })
	}
	if c := n.literal(tok); c != nil && !overlapLevel(c, rest, visit) {
		return false
	}
	return n.pwc == nil || overlapLevel(n.pwc, rest, visit)
}

// eachChild calls fn for every child of n (literal, "*" and ">") until it
// returns false.
func (n *node[T]) eachChild(fn func(*node[T]) bool) bool {
	for i := range n.edges {
		if !fn(n.edges[i].child) {
			return false
		}
	}
	for _, c := range n.literals {
		if !fn(c) {
			return false
		}
	}
	if n.pwc != nil && !fn(n.pwc) {
		return false
	}
	return n.fwc == nil || fn(n.fwc)
}

func visitSubtree[T comparable](n *node[T], visit func(T) bool) bool {
	return visitNode(n, visit) && n.eachChild(func(c *node[T]) bool { return visitSubtree(c, visit) })
}

// visitNode visits the subscriptions ending at n, plain and queued.
func visitNode[T comparable](n *node[T], visit func(T) bool) bool {
	for _, v := range n.plain {
		if !visit(v) {
			return false
		}
	}
	for _, q := range n.queues {
		for _, v := range q.members {
			if !visit(v) {
				return false
			}
		}
	}
	return true
}

// Within reports whether every subject that pattern matches is also
// matched by outer: "orders.*" is within "orders.>", "orders.>" is not
// within "orders.*". Invalid patterns are within nothing.
func Within(pattern, outer string) bool {
	if !ValidSubject(pattern) || !ValidSubject(outer) {
		return false
	}
	for {
		pt, prest, pmore := strings.Cut(pattern, ".")
		ot, orest, omore := strings.Cut(outer, ".")
		switch {
		case ot == ">":
			return true // pattern has a token here, and ">" takes the rest
		case pt == ">":
			return false // pattern takes any number of tokens; outer does not
		case ot != "*" && (pt == "*" || pt != ot):
			return false
		}
		if !pmore || !omore {
			return pmore == omore
		}
		pattern, outer = prest, orest
	}
}
