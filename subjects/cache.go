package subjects

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
)

// The match cache keeps recent Match results by subject, so that a hot
// subject costs a hash and two map lookups instead of a trie walk and an
// allocation.
//
// Sharding: a result is stored in one of cacheShards shards, picked by a
// hash of the subject, each with its own lock. Publishers on different
// subjects rarely touch the same lock, and publishers on the same subject
// only share read locks.
//
// Exactness: results are computed and stored while the trie's read lock is
// held, and Insert and Remove invalidate while holding its write lock, so no
// result can be stored from a trie state older than the last change. A
// change drops exactly the cached subjects its pattern matches: one map
// lookup for a literal pattern (the common case of inbox churn), a scan of
// every shard for a wildcard pattern. Nothing else is flushed.
//
// Bounds: each shard holds at most cacheShardSize results. When a shard is
// full, storing evicts an arbitrary entry (the first the map iterator
// yields, which Go randomises); that costs nothing to track and is good
// enough for a working set that fits.
//
// Admission: a subject is stored only on its second miss, while a small
// table of the hashes missed lately (doorSlots per shard, direct-mapped,
// overwritten freely) still remembers its first. Most subjects a server
// matches once and never again (a reply to a request, a pub ack to a
// client's inbox); storing them would cost a map insert, a key copy and
// the eviction of a subject that does repeat, for nothing. A subject that
// repeats is stored on its second sighting and hits from then on.
const (
	cacheShards    = 16 // a power of two
	cacheShardBits = 4  // log2(cacheShards)
	cacheShardSize = 256
	doorSlots      = 256
)

type cache[T comparable] struct {
	shards [cacheShards]cacheShard[T]
}

type cacheShard[T comparable] struct {
	mu      sync.RWMutex          // guards results
	results map[string]*Result[T] // created on first put
	// hits and misses count lookups for Trie.Stats; per shard, so
	// publishers on different subjects do not share a counter.
	hits, misses atomic.Uint64
	// seen holds the hashes of subjects missed lately (see Admission);
	// made on first miss, so a trie that matches nothing pays nothing.
	seen atomic.Pointer[[doorSlots]atomic.Uint64]
	// Keep the next shard's lock off this shard's cache line, or shards
	// would contend through false sharing.
	_ [64]byte
}

func (c *cache[T]) shard(h uint64) *cacheShard[T] {
	return &c.shards[h&(cacheShards-1)]
}

// getBytes looks up a subject in a network buffer; h is hashBytes(subject).
// It does not allocate: the compiler indexes the map by the bytes in place.
func (c *cache[T]) getBytes(h uint64, subject []byte) (*Result[T], bool) {
	s := c.shard(h)
	s.mu.RLock()
	r, ok := s.results[string(subject)]
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	}
	return r, ok
}

// get looks up a subject; h is hashString(subject).
func (c *cache[T]) get(h uint64, subject string) (*Result[T], bool) {
	s := c.shard(h)
	s.mu.RLock()
	r, ok := s.results[subject]
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	}
	return r, ok
}

// admit counts a miss of the subject hashed h and reports whether its
// result should be stored: whether the subject was missed lately too.
func (c *cache[T]) admit(h uint64) bool {
	s := c.shard(h)
	s.misses.Add(1)
	seen := s.seen.Load()
	if seen == nil {
		s.seen.CompareAndSwap(nil, new([doorSlots]atomic.Uint64))
		seen = s.seen.Load()
	}
	slot := &seen[(h>>cacheShardBits)%doorSlots]
	if slot.Load() == h {
		return true
	}
	slot.Store(h)
	return false
}

// put stores the result for subject; h is hashString(subject). The caller
// holds the trie's read lock, and r is from that same lock hold.
func (c *cache[T]) put(h uint64, subject string, r *Result[T]) {
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.results == nil {
		s.results = make(map[string]*Result[T], cacheShardSize)
	}
	if _, ok := s.results[subject]; !ok && len(s.results) >= cacheShardSize {
		for k := range s.results {
			delete(s.results, k)
			break
		}
	}
	s.results[subject] = r
}

// invalidate drops every cached subject that pattern matches. The caller
// holds the trie's write lock, and pattern is valid. A wildcard pattern
// costs a scan of the whole cache, kept cheap by rejecting subjects on the
// pattern's literal prefix first; see BenchmarkInsertRemove.
func (c *cache[T]) invalidate(pattern string) {
	if isLiteral(pattern) {
		// A literal pattern matches exactly the subject equal to it.
		s := c.shard(hashString(pattern))
		s.mu.Lock()
		delete(s.results, pattern)
		s.mu.Unlock()
		return
	}
	prefix := literalPrefix(pattern)
	rest := pattern[len(prefix):]
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for subject := range s.results {
			// Cached subjects are well-formed, so after the prefix
			// (which ends in '.') the rest is a well-formed subject too.
			if strings.HasPrefix(subject, prefix) && len(subject) > len(prefix) &&
				matchTokens(rest, subject[len(prefix):]) {
				delete(s.results, subject)
			}
		}
		s.mu.Unlock()
	}
}

// hashString picks a subject's shard. It reads eight bytes at a time and
// needs no seed, so a zero Trie works; it only has to spread subjects over
// shards (the maps hash again). Guarded by BenchmarkMatchCached.
func hashString(s string) uint64 {
	h := uint64(len(s)) * hashPrime1
	for ; len(s) >= 8; s = s[8:] {
		h = hashWord(h, uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24|
			uint64(s[4])<<32|uint64(s[5])<<40|uint64(s[6])<<48|uint64(s[7])<<56)
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		w |= uint64(s[i]) << (8 * i)
	}
	return hashFinish(hashWord(h, w))
}

// hashBytes is hashString for bytes; both give the same hash for the same
// subject.
func hashBytes(b []byte) uint64 {
	h := uint64(len(b)) * hashPrime1
	for ; len(b) >= 8; b = b[8:] {
		h = hashWord(h, binary.LittleEndian.Uint64(b))
	}
	var w uint64
	for i := 0; i < len(b); i++ {
		w |= uint64(b[i]) << (8 * i)
	}
	return hashFinish(hashWord(h, w))
}

// Multipliers from xxHash64.
const (
	hashPrime1 = 0x9E3779B185EBCA87
	hashPrime2 = 0xC2B2AE3D27D4EB4F
)

func hashWord(h, w uint64) uint64 {
	h ^= w * hashPrime2
	return bits.RotateLeft64(h, 31) * hashPrime1
}

// hashFinish spreads every input bit into the low bits, which pick the
// shard.
func hashFinish(h uint64) uint64 {
	h ^= h >> 33
	h *= hashPrime2
	return h ^ h>>29
}

// stats adds the cache's counters and the fan-out of what it holds to st.
func (c *cache[T]) stats(st *Stats) {
	var fanout uint64
	for i := range c.shards {
		s := &c.shards[i]
		st.CacheHits += s.hits.Load()
		st.Matches += s.hits.Load() + s.misses.Load()
		s.mu.RLock()
		for _, r := range s.results {
			n := len(r.Plain) + len(r.Queues)
			fanout += uint64(n)
			st.MaxFanout = max(st.MaxFanout, n)
		}
		st.CacheEntries += len(s.results)
		s.mu.RUnlock()
	}
	if st.CacheEntries > 0 {
		st.AvgFanout = float64(fanout) / float64(st.CacheEntries)
	}
}
