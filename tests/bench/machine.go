package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// machine describes where the numbers came from.
type machine struct {
	cpu     string // model name from /proc/cpuinfo
	cores   int
	memory  string // MemTotal from /proc/meminfo
	os      string // PRETTY_NAME from /etc/os-release, plus the kernel release
	goVer   string
	loadavg string // /proc/loadavg at the start
}

func describeMachine() machine {
	m := machine{cpu: "unknown", cores: runtime.NumCPU(), memory: "unknown", os: runtime.GOOS, goVer: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64); err == nil {
					m.memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m.os = strings.Trim(v, `"`)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.os += ", Linux " + strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.loadavg = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return m
}

// cpuUse is a snapshot for measuring how much CPU other processes took
// while the suite ran: the machine's busy time minus this process's and
// its children's. On a shared machine that is the noise in the numbers.
type cpuUse struct {
	at      time.Time
	busy    float64 // seconds of busy CPU on the whole machine
	ownTime float64 // seconds used by this process and its reaped children
}

// clockTicks is USER_HZ, the unit of /proc/stat; 100 on every Linux ABI Go supports.
const clockTicks = 100

func readCPUUse() (cpuUse, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuUse{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return cpuUse{}, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	var busy float64
	for i, s := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 8 { // guest time is already counted in user
			break
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return cpuUse{}, err
		}
		busy += v
	}
	u := cpuUse{at: time.Now(), busy: busy / clockTicks}
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			return cpuUse{}, err
		}
		u.ownTime += seconds(ru.Utime) + seconds(ru.Stime)
	}
	return u, nil
}

func seconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// othersCores is the average number of cores that processes other than
// ours kept busy between two snapshots.
func othersCores(from, to cpuUse) float64 {
	wall := to.at.Sub(from.at).Seconds()
	if wall <= 0 {
		return 0
	}
	return max(0, ((to.busy-from.busy)-(to.ownTime-from.ownTime))/wall)
}
