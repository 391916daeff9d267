package subjects

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What each destination function writes. The outputs are the reference's,
// edge cases included: a position or size outside 1..len-1 leaves the token
// whole, and split may leave empty tokens.

// maxNumberLen is the longest decimal a partition (uint32) or a random
// number (int32, never negative) can be.
const maxNumberLen = 10

// maxLen bounds what write appends for a subject split into tokens, so
// that Apply can size its result once.
func (p *part) maxLen(tokens []string) int {
	switch p.fn {
	case fnLiteral:
		return len(p.literal)
	case fnPartition, fnRandom:
		return maxNumberLen
	case fnWildcard, fnLeft, fnRight:
		return len(p.token(tokens))
	default: // split, slice: at most one '.' per byte
		return 2 * len(p.token(tokens))
	}
}

// token is the subject token a single-token function reads.
func (p *part) token(tokens []string) string {
	return tokens[p.tokens[0]]
}

// write appends the part's output for subject, split into tokens.
func (p *part) write(b *strings.Builder, subject string, tokens []string) {
	n := int(p.n)
	switch p.fn {
	case fnLiteral:
		b.WriteString(p.literal)
	case fnWildcard:
		b.WriteString(p.token(tokens))
	case fnPartition:
		writeUint(b, uint64(partition(subject, tokens, p.tokens, uint32(p.n))))
	case fnRandom:
		if n == 0 {
			b.WriteByte('0')
			return
		}
		writeUint(b, uint64(int(rand.Int32())%n)) // never negative: the sign is the dividend's
	case fnSplitFromLeft:
		tok := p.token(tokens)
		if n > 0 && n < len(tok) {
			b.WriteString(tok[:n])
			b.WriteByte('.')
			b.WriteString(tok[n:])
		} else {
			b.WriteString(tok)
		}
	case fnSplitFromRight:
		tok := p.token(tokens)
		if n > 0 && n < len(tok) {
			b.WriteString(tok[:len(tok)-n])
			b.WriteByte('.')
			b.WriteString(tok[len(tok)-n:])
		} else {
			b.WriteString(tok)
		}
	case fnSliceFromLeft:
		tok := p.token(tokens)
		if n <= 0 || n >= len(tok) {
			b.WriteString(tok)
			return
		}
		for i := 0; i < len(tok); i += n {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok[i:min(i+n, len(tok))])
		}
	case fnSliceFromRight:
		tok := p.token(tokens)
		if n <= 0 || n >= len(tok) {
			b.WriteString(tok)
			return
		}
		i := len(tok) % n
		if i > 0 {
			b.WriteString(tok[:i])
			b.WriteByte('.')
		}
		for ; i < len(tok); i += n {
			b.WriteString(tok[i : i+n])
			if i+n < len(tok) {
				b.WriteByte('.')
			}
		}
	case fnSplit:
		writeSplit(b, p.token(tokens), p.sep)
	case fnLeft:
		tok := p.token(tokens)
		if n > 0 && n < len(tok) {
			tok = tok[:n]
		}
		b.WriteString(tok)
	case fnRight:
		tok := p.token(tokens)
		if n > 0 && n < len(tok) {
			tok = tok[len(tok)-n:]
		}
		b.WriteString(tok)
	}
}

// partition is the bucket, 0..buckets-1, of the FNV-1a 32-bit hash of the
// chosen subject tokens concatenated without separators, or of the whole
// subject when none are chosen: the reference's hash and key, so that a
// key lands in the same partition on both servers. A count of 0 is bucket
// 0; a negative count is used as its unsigned 32-bit value, as there.
func partition(subject string, tokens []string, chosen []int, buckets uint32) uint32 {
	if buckets == 0 {
		return 0
	}
	h := uint32(fnvOffset)
	if len(chosen) == 0 {
		h = fnv1a(h, subject)
	} else {
		for _, i := range chosen {
			h = fnv1a(h, tokens[i])
		}
	}
	return h % buckets
}

// FNV-1a, 32 bits (hash/fnv's New32a without its allocation).
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func fnv1a(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= fnvPrime
	}
	return h
}

func writeUint(b *strings.Builder, v uint64) {
	var digits [20]byte
	b.Write(strconv.AppendUint(digits[:0], v, 10))
}

// writeSplit writes tok cut at every sep, the pieces joined by '.', as the
// reference does: empty pieces are not written, and a '.' goes before each
// non-empty piece except after an empty first one. An empty sep cuts
// between UTF-8 sequences (as strings.Split does).
func writeSplit(b *strings.Builder, tok, sep string) {
	if sep == "" {
		for i := 0; i < len(tok); {
			_, size := utf8.DecodeRuneInString(tok[i:])
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok[i : i+size])
			i += size
		}
		return
	}
	cur, rest, more := strings.Cut(tok, sep)
	for first := true; ; first = false {
		b.WriteString(cur)
		if !more {
			return
		}
		next, nextRest, nextMore := strings.Cut(rest, sep)
		if next != "" && !(first && cur == "") {
			b.WriteByte('.')
		}
		cur, rest, more = next, nextRest, nextMore
	}
}
