package main

import "syscall"

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
