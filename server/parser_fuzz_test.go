package server

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// FuzzParser checks that any input parses the same whole or in random
// chunks, and never panics.
func FuzzParser(f *testing.F) { fuzzParser(f, parserCases, feed) }

// fuzzParser seeds f with cases and compares whole and chunked parses.
func fuzzParser(f *testing.F, cases []parserCase, feed func([]string) ([]string, error)) {
	for _, tc := range cases {
		f.Add([]byte(tc.in), uint64(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		whole, werr := feed([]string{string(in)})
		chunked, cerr := feed(randomChunks(string(in), rand.New(rand.NewPCG(seed, 0))))
		if !reflect.DeepEqual(whole, chunked) {
			t.Fatalf("whole %q\nchunked %q", whole, chunked)
		}
		var wp, cp *protoError
		errors.As(werr, &wp)
		errors.As(cerr, &cp)
		if (werr == nil) != (cerr == nil) || wp != cp {
			// The control-line limit is checked on partial lines too,
			// so a split can only turn some errors into that one.
			if !(errors.Is(cerr, errMaxControlLine) && werr != nil) {
				t.Fatalf("whole err %v, chunked err %v", werr, cerr)
			}
		}
	})
}
