//go:build unix

package tests

import "syscall"

// raiseOpenFileLimit lifts the soft limit on open files to the hard one
// and returns it.
func raiseOpenFileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return rl.Cur
}
