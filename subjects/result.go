package subjects

// Result is what a subject matched: every plain subscription, and every
// queue group with all of its members (the caller picks one member per
// group to deliver to).
//
// A Result returned by Trie.Match is shared: the trie keeps it in its match
// cache and hands the same pointer to every caller matching the same subject
// until a subscription change invalidates it. Callers must treat it, its
// slices and its groups as read-only. It stays valid (a snapshot of the
// trie at match time) after the trie changes.
type Result[T comparable] struct {
	// Plain holds the value of every plain subscription whose pattern
	// matches, once per subscription: a value inserted under two matching
	// patterns appears twice. Order is unspecified.
	Plain []T
	// Queues holds one Group per (pattern, queue name) pair with a matching
	// pattern. Two patterns with the same queue name ("foo.*" and "foo.>",
	// both in queue "q") are two groups, as in the reference server. Order
	// is unspecified.
	Queues []Group[T]
}

// Group is the members of one queue group whose pattern matched.
type Group[T comparable] struct {
	Name    string // the queue name given to Trie.Insert
	Members []T    // never empty; one entry per queue subscription
}

// Empty reports whether r holds no subscription at all. A nil Result is
// empty.
func (r *Result[T]) Empty() bool {
	return r == nil || (len(r.Plain) == 0 && len(r.Queues) == 0)
}

// newResult copies the subscriptions of the matched nodes into a fresh
// Result. Nodes keep mutating after the trie's lock is released, so nothing
// is shared with them. All group members share one backing array, each
// group's slice capped at its own length.
func newResult[T comparable](found []*node[T]) *Result[T] {
	var plain, groups, members int
	for _, n := range found {
		plain += len(n.plain)
		groups += len(n.queues)
		for _, q := range n.queues {
			members += len(q.members)
		}
	}
	r := &Result[T]{}
	if plain > 0 {
		r.Plain = make([]T, 0, plain)
	}
	if groups > 0 {
		r.Queues = make([]Group[T], 0, groups)
	}
	all := make([]T, 0, members)
	for _, n := range found {
		r.Plain = append(r.Plain, n.plain...)
		for _, q := range n.queues {
			start := len(all)
			all = append(all, q.members...)
			r.Queues = append(r.Queues, Group[T]{Name: q.name, Members: all[start:len(all):len(all)]})
		}
	}
	return r
}
