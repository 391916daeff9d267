// Package header reads NATS header blocks, the bytes an HPUB or HMSG
// carries before its payload:
//
//	NATS/1.0[ status[ description]]\r\n
//	Name: value\r\n
//	...
//	\r\n
//
// It is the one reader of header blocks for the storage (jetlog: dedup
// ids, TTLs, markers), JetStream (the Nats-* publish headers) and the
// monitoring dashboard (a stored message's headers). It imports only the
// standard library, so any package of the module may use it. Every
// function aliases its input, allocates nothing and never panics on
// malformed input: a block without a status line has no headers, and a
// line without a colon is no header.
package header

import (
	"bytes"
	"iter"
)

// Lines yields every line of the block hdr after its status line, with
// its name: the text before the line's first colon, trimmed; nil for a
// line without a colon (the blank line that ends the block among them).
// Lines after that blank line are yielded too: a well-formed block has
// none, and each reader decides whether to stop there.
func Lines(hdr []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(name, line []byte) bool) {
		_, rest, ok := bytes.Cut(hdr, crlf)
		if !ok {
			return
		}
		for len(rest) > 0 {
			var line []byte
			line, rest, _ = bytes.Cut(rest, crlf)
			var name []byte
			if k, _, ok := bytes.Cut(line, colon); ok {
				name = bytes.TrimSpace(k)
			}
			if !yield(name, line) {
				return
			}
		}
	}
}

// LineValue is the value of a header line: the text after its first
// colon, trimmed (nil for a line without a colon).
func LineValue(line []byte) []byte {
	_, v, ok := bytes.Cut(line, colon)
	if !ok {
		return nil
	}
	return bytes.TrimSpace(v)
}

// Lookup returns the value of the first header named key (without regard
// to case), trimmed, and whether the block has that header before its
// blank line at all, even empty (the reference refuses an empty
// Nats-Schedule-Time-Zone, say, where it ignores a missing one).
func Lookup(hdr []byte, key string) ([]byte, bool) {
	return lookup(hdr, key, true)
}

// Value is Lookup's value, nil for a header that is absent or empty.
func Value(hdr []byte, key string) []byte {
	v, _ := lookup(hdr, key, true)
	if len(v) == 0 {
		return nil
	}
	return v
}

// ExactValue is Value with the name matched as written, case and all, as
// the reference matches the Nats-Expected-* headers (a
// "nats-expected-last-sequence" header is no expectation there).
func ExactValue(hdr []byte, key string) []byte {
	v, _ := lookup(hdr, key, false)
	if len(v) == 0 {
		return nil
	}
	return v
}

// lookup is Lookup, with the name folded or matched exactly.
func lookup(hdr []byte, key string, fold bool) ([]byte, bool) {
	for name, line := range Lines(hdr) {
		if len(line) == 0 {
			break // the end of the block
		}
		if name == nil {
			continue
		}
		if fold && bytes.EqualFold(name, []byte(key)) || !fold && string(name) == key {
			return LineValue(line), true
		}
	}
	return nil, false
}

var (
	crlf  = []byte("\r\n")
	colon = []byte(":")
)
