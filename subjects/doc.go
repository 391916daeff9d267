// Package subjects is NATS subject syntax and the wildcard trie that routes
// published messages to subscriptions. It is pure: it imports only the
// standard library and knows nothing of connections, the protocol or logging.
//
// # Subjects
//
// A subject is tokens separated by '.'. In a subscription a token that is
// exactly "*" matches any one token, and a last token that is exactly ">"
// matches one or more tokens. ValidSubject, ValidLiteral and ValidQueue apply
// the reference server's rules (PROTOCOL.md §5) byte for byte; the *Bytes
// forms check a subject in a network buffer without allocating.
//
// # Trie
//
// Trie holds subscriptions as (pattern, queue name, value) and Match returns
// the plain subscribers and the queue groups a published subject reaches.
// Each trie node keeps its literal children (a small slice, or a map when
// there are many) and one slot each for a "*" and a ">" child; Remove prunes
// nodes left unused, so subscribe/unsubscribe churn does not grow memory.
//
// Trie is safe for concurrent use, unlike most of this code base's pure
// types: its match cache must be filled by concurrent readers, so the
// locking lives beside it. Lock order is Trie.mu, then one cache shard's
// mu; see Trie and cache.go. Results are shared and read-only.
//
// # Transforms
//
// Transform rewrites a subject matching a source pattern into a
// destination built from its tokens ("$1", "{{partition(8,1)}}",
// "{{split(1,-)}}" and the other functions): the one engine behind core
// subject mappings and JetStream's subject transforms, with the reference
// server's syntax and behaviour to the edge cases (tests/transform_diff_test.go
// holds it to them). See transform.go and docs/mappings.md.
package subjects
