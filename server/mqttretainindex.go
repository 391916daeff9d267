package server

import "strings"

// retainedIndex is an account's index of retained messages: for every
// subject with a retained message, the stream sequence of its record in
// $MQTT_rmsgs. It holds no payloads (those stay in the stream and are
// read when a subscription matches), so it costs a node per token, the
// tokens' bytes and a seq: about 100 bytes per retained topic of three
// levels (docs/mqtt.md has the measurement). It is the reverse of the
// subject trie: literal subjects are stored, and a pattern (a mapped
// MQTT filter) finds them.
//
// Not safe for concurrent use; mqttRetained guards it.
type retainedIndex struct {
	root retainedNode
	size int // subjects with a retained message
}

// retainedMaxEdges is how many children a node keeps in a slice before
// it switches to a map, as the subject trie does: most levels below a
// device id have one or two children.
const retainedMaxEdges = 8

// retainedNode is one token position: its children by next token and,
// when a subject ends here, its record's seq (0: none ends here).
type retainedNode struct {
	edges []retainedEdge
	kids  map[string]*retainedNode // once there are more than retainedMaxEdges children
	seq   uint64
}

type retainedEdge struct {
	token string
	node  *retainedNode
}

func (n *retainedNode) child(tok string) *retainedNode {
	if n.kids != nil {
		return n.kids[tok]
	}
	for i := range n.edges {
		if n.edges[i].token == tok {
			return n.edges[i].node
		}
	}
	return nil
}

func (n *retainedNode) addChild(tok string) *retainedNode {
	if c := n.child(tok); c != nil {
		return c
	}
	c := &retainedNode{}
	tok = strings.Clone(tok) // the subject may be a slice of a read buffer
	switch {
	case n.kids != nil:
		n.kids[tok] = c
	case len(n.edges) < retainedMaxEdges:
		n.edges = append(n.edges, retainedEdge{tok, c})
	default:
		n.kids = make(map[string]*retainedNode, 2*retainedMaxEdges)
		for _, e := range n.edges {
			n.kids[e.token] = e.node
		}
		n.kids[tok] = c
		n.edges = nil
	}
	return c
}

func (n *retainedNode) removeChild(tok string) {
	if n.kids != nil {
		delete(n.kids, tok)
		if len(n.kids) <= retainedMaxEdges/2 {
			n.edges = make([]retainedEdge, 0, len(n.kids))
			for k, c := range n.kids {
				n.edges = append(n.edges, retainedEdge{k, c})
			}
			n.kids = nil
		}
		return
	}
	for i := range n.edges {
		if n.edges[i].token == tok {
			last := len(n.edges) - 1
			n.edges[i] = n.edges[last]
			n.edges[last] = retainedEdge{}
			n.edges = n.edges[:last]
			break
		}
	}
	if len(n.edges) == 0 {
		n.edges = nil
	}
}

func (n *retainedNode) empty() bool {
	return n.seq == 0 && len(n.edges) == 0 && n.kids == nil
}

func (n *retainedNode) each(fn func(tok string, c *retainedNode)) {
	for _, e := range n.edges {
		fn(e.token, e.node)
	}
	for tok, c := range n.kids {
		fn(tok, c)
	}
}

// set records seq as subject's record, unless the index already has a
// later one (two retained publishes to one topic whose acks come back in
// the other order).
func (x *retainedIndex) set(subject string, seq uint64) {
	n := &x.root
	for tok := range strings.SplitSeq(subject, ".") {
		n = n.addChild(tok)
	}
	if n.seq == 0 {
		x.size++
	}
	n.seq = max(n.seq, seq)
}

// remove forgets subject's record if it is not later than seq (the
// empty record that cleared it): a publish stored after the clear
// stays. The index may so keep a record the stream no longer has, when
// a clear overtakes an earlier publish; a read then finds it gone and
// skips it. It never misses one the stream has.
func (x *retainedIndex) remove(subject string, seq uint64) {
	var path [32]*retainedNode
	nodes := append(path[:0], &x.root)
	var toks []string
	n := &x.root
	for tok := range strings.SplitSeq(subject, ".") {
		if n = n.child(tok); n == nil {
			return
		}
		nodes = append(nodes, n)
		toks = append(toks, tok)
	}
	if n.seq == 0 || n.seq > seq {
		return
	}
	n.seq = 0
	x.size--
	for i := len(toks) - 1; i >= 0 && nodes[i+1].empty(); i-- {
		nodes[i].removeChild(toks[i])
	}
}

// match calls visit with the seq of every record whose subject pattern
// matches ("*" one token, ">" one or more), and the subject's tokens
// (valid only during the call).
func (x *retainedIndex) match(pattern string, visit func(tokens []string, seq uint64)) {
	if pattern == "" {
		return
	}
	var path [16]string
	matchRetained(&x.root, strings.Split(pattern, "."), path[:0], visit)
}

func matchRetained(n *retainedNode, pattern, path []string, visit func([]string, uint64)) {
	if len(pattern) == 0 {
		if n.seq != 0 {
			visit(path, n.seq)
		}
		return
	}
	switch tok, rest := pattern[0], pattern[1:]; tok {
	case ">":
		n.each(func(t string, c *retainedNode) { visitRetained(c, append(path, t), visit) })
	case "*":
		n.each(func(t string, c *retainedNode) { matchRetained(c, rest, append(path, t), visit) })
	default:
		if c := n.child(tok); c != nil {
			matchRetained(c, rest, append(path, tok), visit)
		}
	}
}

func visitRetained(n *retainedNode, path []string, visit func([]string, uint64)) {
	if n.seq != 0 {
		visit(path, n.seq)
	}
	n.each(func(t string, c *retainedNode) { visitRetained(c, append(path, t), visit) })
}
