package jetlog

import (
	"syscall"
	"time"
)

// threadCPU is the calling thread's CPU time (lock the goroutine to its
// thread around a measurement): unlike the wall time, it leaves out the
// time other processes had the core.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
