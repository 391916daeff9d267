package subjects

import "strings"

// maxEdges is how many literal children a node keeps in a slice before it
// switches to a map. Most nodes have one or two children ("a.<id>.b" has one
// below every id), and a one-element slice is about a tenth of the memory of
// the smallest map; see TestTrieMillionSubscriptions. A map shrinks back to
// a slice once it holds maxEdges/2 children, so a drained map (inboxes come
// and go) does not pin its memory.
const maxEdges = 8

// node is one token position in the trie: its children by next token, and
// the subscriptions whose pattern ends here.
type node[T comparable] struct {
	edges    []edge[T]           // literal children while few; nil when literals is in use
	literals map[string]*node[T] // literal children once there are more than maxEdges
	pwc      *node[T]            // child for a "*" token
	fwc      *node[T]            // child for a ">" token; it has no children
	plain    []T                 // plain subscriptions ending here (a multiset)
	queues   []queue[T]          // queue subscriptions ending here, one entry per name
}

type edge[T comparable] struct {
	token string
	child *node[T]
}

type queue[T comparable] struct {
	name    string
	members []T // never empty
}

// literal returns the child for the literal token tok, or nil. A published
// subject may carry a literal "*" or ">" token; no literal child has such a
// key (those tokens live in pwc and fwc), so it finds nothing here and is
// matched by wildcards only, as in the reference server.
func (n *node[T]) literal(tok string) *node[T] {
	if n.literals != nil {
		return n.literals[tok]
	}
	for i := range n.edges {
		if n.edges[i].token == tok {
			return n.edges[i].child
		}
	}
	return nil
}

// child returns the child for a pattern token, wildcard or literal, or nil.
func (n *node[T]) child(tok string) *node[T] {
	switch tok {
	case "*":
		return n.pwc
	case ">":
		return n.fwc
	}
	return n.literal(tok)
}

// addChild returns the child for a pattern token, creating it if needed.
func (n *node[T]) addChild(tok string) *node[T] {
	if c := n.child(tok); c != nil {
		return c
	}
	c := &node[T]{}
	switch tok {
	case "*":
		n.pwc = c
		return c
	case ">":
		n.fwc = c
		return c
	}
	// The pattern may be a slice of a large buffer the caller reuses or
	// would like collected; keys must not pin it.
	tok = strings.Clone(tok)
	switch {
	case n.literals != nil:
		n.literals[tok] = c
	case len(n.edges) < maxEdges:
		n.edges = append(n.edges, edge[T]{token: tok, child: c})
	default:
		n.literals = make(map[string]*node[T], 2*maxEdges)
		for _, e := range n.edges {
			n.literals[e.token] = e.child
		}
		n.literals[tok] = c
		n.edges = nil
	}
	return c
}

// removeChild drops the child for a pattern token, which must exist.
func (n *node[T]) removeChild(tok string) {
	switch tok {
	case "*":
		n.pwc = nil
		return
	case ">":
		n.fwc = nil
		return
	}
	if n.literals != nil {
		delete(n.literals, tok)
		if len(n.literals) <= maxEdges/2 {
			n.edges = make([]edge[T], 0, len(n.literals))
			for k, c := range n.literals {
				n.edges = append(n.edges, edge[T]{token: k, child: c})
			}
			n.literals = nil
		}
		return
	}
	for i := range n.edges {
		if n.edges[i].token == tok {
			last := len(n.edges) - 1
			n.edges[i] = n.edges[last]
			n.edges[last] = edge[T]{}
			n.edges = n.edges[:last]
			break
		}
	}
	if len(n.edges) == 0 {
		n.edges = nil
	}
}

// hasSubs reports whether any subscription ends at n.
func (n *node[T]) hasSubs() bool {
	return len(n.plain) > 0 || len(n.queues) > 0
}

// unused reports whether n can be pruned: no subscription ends here and
// nothing hangs below.
func (n *node[T]) unused() bool {
	return !n.hasSubs() && len(n.edges) == 0 && n.literals == nil && n.pwc == nil && n.fwc == nil
}

// addSub records one subscription ending at n.
func (n *node[T]) addSub(queueName string, v T) {
	if queueName == "" {
		n.plain = append(n.plain, v)
		return
	}
	for i := range n.queues {
		if n.queues[i].name == queueName {
			n.queues[i].members = append(n.queues[i].members, v)
			return
		}
	}
	n.queues = append(n.queues, queue[T]{name: strings.Clone(queueName), members: []T{v}})
}

// removeSub drops one subscription ending at n and reports whether there
// was one.
func (n *node[T]) removeSub(queueName string, v T) bool {
	if queueName == "" {
		var ok bool
		n.plain, ok = without(n.plain, v)
		return ok
	}
	for i := range n.queues {
		q := &n.queues[i]
		if q.name != queueName {
			continue
		}
		var ok bool
		q.members, ok = without(q.members, v)
		if ok && len(q.members) == 0 {
			last := len(n.queues) - 1
			n.queues[i] = n.queues[last]
			n.queues[last] = queue[T]{}
			n.queues = n.queues[:last]
			if last == 0 {
				n.queues = nil
			}
		}
		return ok
	}
	return false
}

// without removes one occurrence of v from s, in place and without keeping
// order, and reports whether it found one. It releases the backing array
// once it is mostly empty, so a slice that once held many subscribers does
// not stay large after they leave.
func without[T comparable](s []T, v T) ([]T, bool) {
	for i := range s {
		if s[i] != v {
			continue
		}
		last := len(s) - 1
		s[i] = s[last]
		var zero T
		s[last] = zero // do not keep the removed value reachable
		s = s[:last]
		switch {
		case last == 0:
			s = nil
		case cap(s) > 32 && last <= cap(s)/4:
			s = append([]T(nil), s...)
		}
		return s, true
	}
	return s, false
}
