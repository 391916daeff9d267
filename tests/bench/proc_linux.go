package main

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"
)

// childAttr puts a child in its own process group, so that we can signal
// it and everything it started, and asks the kernel to kill it if this
// program dies without cleaning up (SIGKILL, a crash).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}

// raiseFileLimit lifts the soft open-files limit to the hard one: the
// idle-connections scenario holds 10k sockets in this process and as many
// in the server, which inherits the limit.
func raiseFileLimit() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	lim.Cur = lim.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}

// processCPUTime is the CPU time (user + system, all threads, live and
// exited) that process pid has used, read from its process CPU-time clock
// (clock_getcpuclockid(3): clock id ^pid<<3 | CPUCLOCK_SCHED). The kernel
// keeps it in nanoseconds, where /proc/<pid>/stat rounds to clock ticks
// (10 ms), too coarse for a quick run.
func processCPUTime(pid int) (time.Duration, error) {
	const cpuclockSched = 2
	clock := int32(^pid)<<3 | cpuclockSched
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, fmt.Errorf("clock_gettime(process %d CPU clock): %w", pid, errno)
	}
	return time.Duration(ts.Nano()), nil
}
