//go:build unix

package main

import (
	"os"
	"syscall"
)

// lameDuckSignals are the signals that put `bus serve` into lame-duck
// mode: SIGUSR2, as nats-server's.
func lameDuckSignals() []os.Signal { return []os.Signal{syscall.SIGUSR2} }

func isLameDuckSignal(sig os.Signal) bool { return sig == syscall.SIGUSR2 }

func signalLameDuck(pid int) error { return syscall.Kill(pid, syscall.SIGUSR2) }
