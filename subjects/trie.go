package subjects

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Trie maps subscription patterns to the values subscribed under them, and
// answers which values a published subject reaches.
//
// A Trie is safe for concurrent use. Match and MatchString take a read lock,
// so publishers never wait for each other; Insert and Remove take the write
// lock. Matches are served from a bounded cache of recent subjects (see
// cache.go) that Insert and Remove keep exact: a Match that starts after an
// Insert or Remove returned always sees its effect.
//
// Lock order: Trie.mu, then at most one cache shard's mu. Nothing else is
// ever locked while either is held.
//
// The zero value is an empty trie ready for use. A Trie must not be copied
// after first use.
type Trie[T comparable] struct {
	mu    sync.RWMutex // guards root and count; cache is only touched with mu held
	root  node[T]
	count int // subscriptions in the trie
	// inserts and removes count changes since the trie was made (Stats).
	inserts, removes uint64

	cache cache[T]  // safe for concurrent use under mu's read lock
	empty Result[T] // the shared result for "no subscription matches"
}

// NewTrie returns an empty trie.
func NewTrie[T comparable]() *Trie[T] {
	return &Trie[T]{}
}

// maxStackTokens is how many tokens are split without allocating. Subjects
// with more tokens work, at the cost of an allocation.
const maxStackTokens = 16

// Insert adds one subscription: value v under pattern, in the queue group
// queueName, or as a plain subscription if queueName is "". Every call adds
// a subscription, even if the same triple is already present; Remove takes
// one away. It returns an error wrapping ErrBadSubject or ErrBadQueue for an
// invalid pattern or queue name.
func (t *Trie[T]) Insert(pattern, queueName string, v T) error {
	if !ValidSubject(pattern) {
		return fmt.Errorf("subjects: insert %q: %w", pattern, ErrBadSubject)
	}
	if queueName != "" && !ValidQueue(queueName) {
		return fmt.Errorf("subjects: insert %q queue %q: %w", pattern, queueName, ErrBadQueue)
	}
	var buf [maxStackTokens]string
	tokens := split(pattern, buf[:0])

	t.mu.Lock()
	defer t.mu.Unlock()
	n := &t.root
	for _, tok := range tokens {
		n = n.addChild(tok)
	}
	n.addSub(queueName, v)
	t.count++
	t.inserts++
	t.cache.invalidate(pattern)
	return nil
}

// Remove takes away one subscription added by Insert with the same pattern,
// queue name and value, and prunes the nodes it leaves unused. It returns an
// error wrapping ErrNotFound if there is none, or ErrBadSubject or
// ErrBadQueue for an invalid pattern or queue name.
func (t *Trie[T]) Remove(pattern, queueName string, v T) error {
	if !ValidSubject(pattern) {
		return fmt.Errorf("subjects: remove %q: %w", pattern, ErrBadSubject)
	}
	if queueName != "" && !ValidQueue(queueName) {
		return fmt.Errorf("subjects: remove %q queue %q: %w", pattern, queueName, ErrBadQueue)
	}
	var buf [maxStackTokens]string
	tokens := split(pattern, buf[:0])
	var pathBuf [maxStackTokens + 1]*node[T]
	path := pathBuf[:0] // path[i] is reached by tokens[:i]

	t.mu.Lock()
	defer t.mu.Unlock()
	n := &t.root
	path = append(path, n)
	for _, tok := range tokens {
		if n = n.child(tok); n == nil {
			return fmt.Errorf("subjects: remove %q queue %q: %w", pattern, queueName, ErrNotFound)
		}
		path = append(path, n)
	}
	if !n.removeSub(queueName, v) {
		return fmt.Errorf("subjects: remove %q queue %q: %w", pattern, queueName, ErrNotFound)
	}
	t.count--
	t.removes++
	for i := len(tokens); i > 0 && path[i].unused(); i-- {
		path[i-1].removeChild(tokens[i-1])
	}
	t.cache.invalidate(pattern)
	return nil
}

// Count returns the number of subscriptions in the trie.
func (t *Trie[T]) Count() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.count
}

// Stats are a trie's counters, for monitoring. Matches counts lookups of
// well-formed subjects (a malformed one may not be counted); the fan-out
// figures are over the results currently cached (len(Plain)+len(Queues)).
type Stats struct {
	Subscriptions int
	Inserts       uint64
	Removes       uint64
	Matches       uint64
	CacheHits     uint64
	CacheEntries  int
	MaxFanout     int
	AvgFanout     float64
}

// Stats snapshots the trie's counters. It takes the read lock and each
// cache shard's read lock in turn, so it costs a pass over the cache.
func (t *Trie[T]) Stats() Stats {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st := Stats{Subscriptions: t.count, Inserts: t.inserts, Removes: t.removes}
	t.cache.stats(&st)
	return st
}

// Match returns the subscriptions that a message published to subject
// reaches. subject is used as given, typically straight from a network
// buffer; it is neither retained nor modified. Tokens that are exactly "*"
// or ">" are literal tokens here (non-pedantic clients publish such
// subjects): they meet wildcard subscriptions only. A subject with an empty
// token ("foo..bar", ".foo", "") matches nothing.
//
// The result is shared and read-only; see Result. It is never nil. On a
// cache hit Match does not allocate; see BenchmarkMatchCached.
func (t *Trie[T]) Match(subject []byte) *Result[T] {
	h := hashBytes(subject)
	t.mu.RLock()
	defer t.mu.RUnlock()
	if r, ok := t.cache.getBytes(h, subject); ok {
		return r
	}
	if !wellFormed(subject) {
		return &t.empty
	}
	if !t.cache.admit(h) {
		// Walked, not stored: the string only lives through the walk,
		// which keeps none of it, so it may view the buffer.
		return t.walk(unsafe.String(unsafe.SliceData(subject), len(subject)))
	}
	return t.matchMiss(h, string(subject))
}

// MatchString is Match for a subject held as a string. The cache may keep
// subject as a key, so it must be an ordinary immutable string, never one
// made with unsafe over a buffer that is reused; use Match for those bytes.
func (t *Trie[T]) MatchString(subject string) *Result[T] {
	h := hashString(subject)
	t.mu.RLock()
	defer t.mu.RUnlock()
	if r, ok := t.cache.get(h, subject); ok {
		return r
	}
	if !wellFormed(subject) {
		return &t.empty
	}
	if !t.cache.admit(h) {
		return t.walk(subject)
	}
	return t.matchMiss(h, subject)
}

// matchMiss walks the trie and caches the result (a subject admitted by
// the cache: see Admission in cache.go). The caller holds the read
// lock, which keeps writers (and so invalidation) out until the result is in
// the cache: a cached result is never older than the trie. subject has no
// empty token; see BenchmarkMatchUncached.
func (t *Trie[T]) matchMiss(h uint64, subject string) *Result[T] {
	r := t.walk(subject)
	t.cache.put(h, subject, r)
	return r
}

// walk computes the result for a well-formed subject without the cache.
func (t *Trie[T]) walk(subject string) *Result[T] {
	var buf [maxStackTokens]string
	var foundBuf [maxStackTokens]*node[T]
	found := collect(&t.root, split(subject, buf[:0]), foundBuf[:0])
	if len(found) == 0 {
		return &t.empty
	}
	return newResult(found)
}

// collect appends to found every node with subscriptions whose pattern
// matches the remaining tokens, starting at n.
func collect[T comparable](n *node[T], tokens []string, found []*node[T]) []*node[T] {
	for i, tok := range tokens {
		if n.fwc != nil && n.fwc.hasSubs() {
			found = append(found, n.fwc) // ">" takes this token and all after it
		}
		if n.pwc != nil {
			found = collect(n.pwc, tokens[i+1:], found) // "*" takes this token
		}
		if n = n.literal(tok); n == nil {
			return found
		}
	}
	if n.hasSubs() {
		found = append(found, n)
	}
	return found
}

// split appends the '.'-separated tokens of s to tokens.
func split(s string, tokens []string) []string {
	for {
		tok, rest, more := strings.Cut(s, ".")
		tokens = append(tokens, tok)
		if !more {
			return tokens
		}
		s = rest
	}
}

// wellFormed reports whether s is non-empty and has no empty token, the
// only shape Match needs; anything else goes (see Match).
func wellFormed[S ~string | ~[]byte](s S) bool {
	if len(s) == 0 || s[0] == sep || s[len(s)-1] == sep {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] == sep && s[i-1] == sep {
			return false
		}
	}
	return true
}

// Matches reports whether a subscription on pattern receives a message
// published to subject, by the rules of Trie.Match. It is false if pattern
// is not a valid subscription subject. It does not allocate.
func Matches(pattern, subject string) bool {
	return ValidSubject(pattern) && wellFormed(subject) && matchTokens(pattern, subject)
}

// matchTokens is Matches for a valid pattern and a well-formed subject.
func matchTokens(pattern, subject string) bool {
	for {
		ptok, prest, pmore := strings.Cut(pattern, ".")
		stok, srest, smore := strings.Cut(subject, ".")
		if ptok == ">" {
			return true // valid patterns have ">" last only
		}
		if ptok != "*" && ptok != stok {
			return false
		}
		if !pmore || !smore {
			return pmore == smore
		}
		pattern, subject = prest, srest
	}
}

// literalPrefix returns the part of a valid pattern before its first
// wildcard token, with the trailing '.': "_INBOX.abc." for "_INBOX.abc.*",
// "" for ">". Every subject the pattern matches starts with it.
func literalPrefix(pattern string) string {
	start := 0
	for i := 0; i <= len(pattern); i++ {
		if i == len(pattern) || pattern[i] == sep {
			if i-start == 1 && (pattern[start] == pwc || pattern[start] == fwc) {
				return pattern[:start]
			}
			start = i + 1
		}
	}
	return pattern
}
