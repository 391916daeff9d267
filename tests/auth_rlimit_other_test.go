//go:build !unix

package tests

// raiseOpenFileLimit cannot tell here; the test that needs many sockets
// skips.
func raiseOpenFileLimit() uint64 { return 0 }
