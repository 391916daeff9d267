package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// usage is what the kernel has counted for one server process since it
// started, read from /proc/<pid>/{stat,status,io} and its CPU-time clock. A run's cost is the
// difference of two snapshots (see cost); peakRSS is already a maximum.
type usage struct {
	cpuTicks int64         // utime + stime of all the process's threads, live and exited, in clock ticks
	cpu      time.Duration // the same from the process CPU-time clock, to the nanosecond; 0 if unreadable
	peakRSS  int64         // VmHWM, bytes: the highest resident set size so far
	io       ioCounters
	fsyncs   int64 // segment fsyncs from bus's /metrics (fsyncs.go); -1 where not counted
}

// ioCounters are the fields of /proc/<pid>/io that the report uses.
type ioCounters struct {
	syscr      int64 // read-family system calls (read, readv, pread…), on sockets and files alike
	syscw      int64 // write-family system calls (write, writev, pwrite…), on sockets and files alike
	writeBytes int64 // write_bytes: page-cache bytes the process dirtied for storage, a page at a time
}

// readUsage snapshots process pid. It fails when the process has gone or
// the kernel does not keep I/O accounting (no /proc/<pid>/io).
func readUsage(pid int) (usage, error) {
	var u usage
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	stat, err := os.ReadFile(dir + "stat")
	if err != nil {
		return usage{}, err
	}
	if u.cpuTicks, err = parseStatCPU(string(stat)); err != nil {
		return usage{}, err
	}
	if cpu, err := processCPUTime(pid); err == nil {
		u.cpu = cpu
	}
	status, err := os.ReadFile(dir + "status")
	if err != nil {
		return usage{}, err
	}
	if u.peakRSS, err = parseStatusKB(string(status), "VmHWM"); err != nil {
		return usage{}, err
	}
	io, err := os.ReadFile(dir + "io")
	if err != nil {
		return usage{}, err
	}
	if u.io, err = parseIO(string(io)); err != nil {
		return usage{}, err
	}
	return u, nil
}

// parseStatCPU returns utime + stime (fields 14 and 15, in clock ticks)
// of a /proc/<pid>/stat line. Field 2, the command name in parentheses,
// may hold spaces and parentheses itself, so fields are counted from the
// last ')'.
func parseStatCPU(stat string) (int64, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("parse: /proc/<pid>/stat without a command name: %q", stat)
	}
	f := strings.Fields(stat[end+1:]) // f[0] is field 3 (state)
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, fmt.Errorf("parse: /proc/<pid>/stat has %d fields after the command name", len(f))
	}
	var sum int64
	for _, i := range []int{utime, stime} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse: /proc/<pid>/stat field %d: %w", i+3, err)
		}
		sum += v
	}
	return sum, nil
}

// parseStatusKB returns the value of the "key:  N kB" line of a
// /proc/<pid>/status document in bytes.
func parseStatusKB(status, key string) (int64, error) {
	for _, l := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(l, key+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("parse: %s line %q", key, l)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse: %s line %q: %w", key, l, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("parse: no %s line", key)
}

// parseVmRSS returns the VmRSS line of a /proc/<pid>/status document in bytes.
func parseVmRSS(status string) (int64, error) { return parseStatusKB(status, "VmRSS") }

// parseIO reads the "name: value" lines of /proc/<pid>/io; syscr, syscw
// and write_bytes must be there.
func parseIO(doc string) (ioCounters, error) {
	var c ioCounters
	fields := map[string]*int64{"syscr": &c.syscr, "syscw": &c.syscw, "write_bytes": &c.writeBytes}
	seen := 0
	for _, l := range strings.Split(doc, "\n") {
		k, v, ok := strings.Cut(l, ":")
		dst, known := fields[strings.TrimSpace(k)]
		if !ok || !known {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return ioCounters{}, fmt.Errorf("parse: /proc/<pid>/io line %q: %w", l, err)
		}
		*dst = n
		seen++
	}
	if seen != len(fields) {
		return ioCounters{}, fmt.Errorf("parse: /proc/<pid>/io lacks one of syscr, syscw, write_bytes: %q", doc)
	}
	return c, nil
}

// cost is what the server spent on the measured part of one run.
type cost struct {
	cpuSeconds float64 // user + system
	peakRSS    int64   // bytes, VmHWM at the end (over the whole life of the process)
	io         ioCounters
	fsyncs     int64 // -1 where not counted
}

// costBetween is the difference of two snapshots of one process. CPU
// time comes from the process CPU clock when both snapshots have it, else
// from the clock ticks of /proc/<pid>/stat.
func costBetween(before, after usage) cost {
	cpu := float64(after.cpuTicks-before.cpuTicks) / clockTicks
	if before.cpu > 0 && after.cpu > 0 {
		cpu = (after.cpu - before.cpu).Seconds()
	}
	fsyncs := int64(-1)
	if before.fsyncs >= 0 && after.fsyncs >= 0 {
		fsyncs = after.fsyncs - before.fsyncs
	}
	return cost{
		cpuSeconds: cpu,
		peakRSS:    after.peakRSS,
		fsyncs:     fsyncs,
		io: ioCounters{
			syscr:      after.io.syscr - before.io.syscr,
			syscw:      after.io.syscw - before.io.syscw,
			writeBytes: after.io.writeBytes - before.io.writeBytes,
		},
	}
}
