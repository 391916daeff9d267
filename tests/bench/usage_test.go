package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A /proc/<pid>/stat line as Linux 6.x prints it, with utime 1234 and
// stime 567 (fields 14 and 15).
const statLine = "4242 (nats-server) S 1 4242 4242 0 -1 4194560 1500 0 0 0 1234 567 0 0 20 0 9 0 12345 1300000000 4000 18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, stat string
		want       int64
	}{
		{"plain", statLine, 1234 + 567},
		{"command_with_spaces_and_parentheses", strings.Replace(statLine, "(nats-server)", "(a) b (c d)", 1), 1234 + 567},
		{"zero", strings.Replace(statLine, " 1234 567 ", " 0 0 ", 1), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseStatCPU(tt.stat)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("parseStatCPU = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestParseStatCPURejectsBadLines(t *testing.T) {
	t.Parallel()
	for name, stat := range map[string]string{
		"no_command":     "4242 nats-server S 1 2 3",
		"too_few_fields": "4242 (bus) S 1 4242 4242 0 -1 4194560 1500 0",
		"not_a_number":   strings.Replace(statLine, " 1234 ", " x ", 1),
	} {
		if _, err := parseStatCPU(stat); err == nil {
			t.Errorf("%s: parseStatCPU(%q): no error", name, stat)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	t.Parallel()
	status := "Name:\tbus\nVmPeak:\t 1300000 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   15808 kB\n"
	for key, want := range map[string]int64{"VmHWM": 20480 << 10, "VmRSS": 15808 << 10, "VmPeak": 1300000 << 10} {
		got, err := parseStatusKB(status, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if got != want {
			t.Errorf("parseStatusKB(%s) = %d, want %d", key, got, want)
		}
	}
	if _, err := parseStatusKB(status, "VmSwap"); err == nil {
		t.Error("missing key: no error")
	}
	if _, err := parseStatusKB("VmHWM:\t20480 MB\n", "VmHWM"); err == nil {
		t.Error("unit other than kB: no error")
	}
}

func TestParseIO(t *testing.T) {
	t.Parallel()
	doc := "rchar: 6976\nwchar: 120\nsyscr: 10\nsyscw: 3\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"
	got, err := parseIO(doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ioCounters{syscr: 10, syscw: 3, writeBytes: 8192}); got != want {
		t.Errorf("parseIO = %+v, want %+v", got, want)
	}
	if _, err := parseIO(strings.Replace(doc, "syscw: 3\n", "", 1)); err == nil {
		t.Error("without syscw: no error")
	}
	if _, err := parseIO(strings.Replace(doc, "syscr: 10", "syscr: ten", 1)); err == nil {
		t.Error("syscr not a number: no error")
	}
}

func TestCostBetween(t *testing.T) {
	t.Parallel()
	before := usage{cpuTicks: 100, cpu: 1003 * time.Millisecond, peakRSS: 10 << 20, io: ioCounters{syscr: 5, syscw: 7, writeBytes: 4096}}
	after := usage{cpuTicks: 350, cpu: 3508 * time.Millisecond, peakRSS: 30 << 20, io: ioCounters{syscr: 105, syscw: 57, writeBytes: 3 * 4096}}
	t.Run("cpu_clock_preferred", func(t *testing.T) {
		t.Parallel()
		c := costBetween(before, after)
		want := cost{cpuSeconds: 2.505, peakRSS: 30 << 20, io: ioCounters{syscr: 100, syscw: 50, writeBytes: 2 * 4096}}
		if !closeTo(c.cpuSeconds, want.cpuSeconds) || c.peakRSS != want.peakRSS || c.io != want.io {
			t.Errorf("costBetween = %+v, want %+v", c, want)
		}
	})
	t.Run("clock_ticks_without_cpu_clock", func(t *testing.T) {
		t.Parallel()
		b, a := before, after
		b.cpu = 0
		if c := costBetween(b, a); !closeTo(c.cpuSeconds, 2.5) {
			t.Errorf("cpuSeconds = %v, want 2.5 (250 ticks of 1/%d s)", c.cpuSeconds, clockTicks)
		}
	})
}

// TestReadUsageOfThisProcess reads the real /proc files of the test
// process, so a kernel that formats them differently fails here rather
// than in a benchmark run.
func TestReadUsageOfThisProcess(t *testing.T) {
	t.Parallel()
	u, err := readUsage(os.Getpid())
	if err != nil {
		t.Skipf("no /proc accounting here: %v", err)
	}
	if u.peakRSS <= 0 || u.io.syscr <= 0 {
		t.Errorf("readUsage(self) = %+v: want a peak RSS and some read calls", u)
	}
	if u.cpu <= 0 {
		t.Errorf("process CPU clock read %v", u.cpu)
	}
	if ticks := time.Duration(u.cpuTicks) * time.Second / clockTicks; ticks > u.cpu+20*time.Millisecond {
		t.Errorf("stat says %v of CPU, the clock (read after it) %v", ticks, u.cpu)
	}
}

func closeTo(a, b float64) bool { return max(a-b, b-a) < 1e-9 }
