//go:build !unix

package main

import (
	"errors"
	"os"
)

// Without SIGUSR2 there is no lame-duck signal; LameDuck is still there
// for embedders.
func lameDuckSignals() []os.Signal { return nil }

func isLameDuckSignal(os.Signal) bool { return false }

func signalLameDuck(int) error {
	return errors.New("lame-duck mode needs SIGUSR2, which this system lacks")
}
