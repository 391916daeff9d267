package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The server-cost table: what each server process spent per message in
// the measured part of a run, from its /proc counters (see usage.go).
// One row per scenario; docs/benchmarks.md explains the columns.

// perMsg are one run's costs divided by the messages it moved.
type perMsg struct {
	cpu    float64 // CPU seconds per million messages (= µs per message)
	disk   float64 // write_bytes per message
	writes float64 // syscw per message
	reads  float64 // syscr per message
	fsyncs float64 // segment fsyncs per message; -1 where not counted
}

func perMessage(c cost, msgs int) perMsg {
	n := float64(msgs)
	return perMsg{
		cpu:    c.cpuSeconds / n * 1e6,
		disk:   float64(c.io.writeBytes) / n,
		writes: float64(c.io.syscw) / n,
		reads:  float64(c.io.syscr) / n,
		fsyncs: float64(c.fsyncs) / n,
	}
}

// costSummary is one flavor's medians over its successful runs of one scenario.
type costSummary struct {
	cpu                 stats  // per million messages
	peakRSS             stats  // MiB
	disk, writes, reads stats  // per message
	fsyncs              stats  // per message, where counted (fsyncsCounted)
	fsyncsCounted       bool   // every run counted its fsyncs (bus, JetStream)
	hasMsgs             bool   // the scenario moves messages; else only peakRSS means anything
	missing             string // why there are no values ("n/a", "failed", "not run"); "" when there are
}

func summarizeCost(sc scenario, s series) costSummary {
	cs := costSummary{hasMsgs: sc.msgs > 0}
	switch {
	case s.na != "":
		cs.missing = "n/a"
		return cs
	case len(s.costs) == 0 && len(s.failures) > 0:
		cs.missing = "failed"
		return cs
	case len(s.costs) == 0:
		cs.missing = "not run"
		return cs
	}
	pick := func(f func(cost) float64) stats {
		vs := make([]float64, len(s.costs))
		for i, c := range s.costs {
			vs[i] = f(c)
		}
		return summarizeValues(vs)
	}
	cs.peakRSS = pick(func(c cost) float64 { return mib(c.peakRSS) })
	if cs.hasMsgs {
		cs.cpu = pick(func(c cost) float64 { return perMessage(c, sc.msgs).cpu })
		cs.disk = pick(func(c cost) float64 { return perMessage(c, sc.msgs).disk })
		cs.writes = pick(func(c cost) float64 { return perMessage(c, sc.msgs).writes })
		cs.reads = pick(func(c cost) float64 { return perMessage(c, sc.msgs).reads })
		cs.fsyncsCounted = true
		for _, c := range s.costs {
			cs.fsyncsCounted = cs.fsyncsCounted && c.fsyncs >= 0
		}
		if cs.fsyncsCounted {
			cs.fsyncs = pick(func(c cost) float64 { return perMessage(c, sc.msgs).fsyncs })
		}
	}
	return cs
}

// costHeader names the columns of costTable; docs/benchmarks.md's "How
// to read" paragraph explains each.
var costHeader = []string{"Scenario", "Msgs/run",
	"CPU s/1M msgs nats-server", "CPU s/1M msgs bus", "CPU bus/nats-server",
	"Peak RSS MiB nats-server", "Peak RSS MiB bus",
	"Disk B/msg nats-server", "Disk B/msg bus",
	"Writes/msg nats-server", "Writes/msg bus",
	"Reads/msg nats-server", "Reads/msg bus", "Fsyncs/msg bus"}

// costTable renders the server-cost table: medians, with the CPU's
// minimum–maximum over the runs in parentheses.
func costTable(results []result) string {
	cells := [][]string{costHeader}
	for _, res := range results {
		ref, bus := summarizeCost(res.sc, res.by[0]), summarizeCost(res.sc, res.by[1])
		msgs := "–"
		if res.sc.msgs > 0 {
			msgs = count(res.sc.msgs)
		}
		line := []string{res.sc.name, msgs,
			cpuCell(ref), cpuCell(bus), ratioCell(ref.cpu, bus.cpu),
			rssCell(ref), rssCell(bus)}
		for _, f := range []func(costSummary) stats{
			func(cs costSummary) stats { return cs.disk },
			func(cs costSummary) stats { return cs.writes },
			func(cs costSummary) stats { return cs.reads },
		} {
			line = append(line, perMsgCell(ref, f(ref)), perMsgCell(bus, f(bus)))
		}
		fsyncs := "–"
		if bus.fsyncsCounted {
			fsyncs = perMsgCell(bus, bus.fsyncs)
		}
		cells = append(cells, append(line, fsyncs))
	}
	return renderTable(cells, 1)
}

func cpuCell(cs costSummary) string {
	switch {
	case cs.missing != "":
		return cs.missing
	case !cs.hasMsgs:
		return "–"
	case cs.cpu.n == 1:
		return formatSig(cs.cpu.median)
	}
	return fmt.Sprintf("%s (%s–%s)", formatSig(cs.cpu.median), formatSig(cs.cpu.min), formatSig(cs.cpu.max))
}

func rssCell(cs costSummary) string {
	if cs.missing != "" {
		return cs.missing
	}
	return strconv.FormatFloat(cs.peakRSS.median, 'f', 1, 64)
}

func perMsgCell(cs costSummary, st stats) string {
	switch {
	case cs.missing != "":
		return cs.missing
	case !cs.hasMsgs:
		return "–"
	}
	return formatSig(st.median)
}

// ratioCell is bus's median over the reference's, or "–" when either is missing.
func ratioCell(ref, bus stats) string {
	if ref.n == 0 || bus.n == 0 || ref.median <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", bus.median/ref.median)
}

// formatSig prints v with about three significant digits and no exponent:
// 1234 → "1234", 12.34 → "12.3", 1.234 → "1.23", 0.01234 → "0.0123".
func formatSig(v float64) string {
	switch a := max(v, -v); {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// describeCost formats one run's cost for the progress log.
func describeCost(sc scenario, c cost) string {
	parts := []string{fmt.Sprintf("server CPU %.2f s", c.cpuSeconds)}
	if sc.msgs > 0 {
		p := perMessage(c, sc.msgs)
		parts = append(parts, fmt.Sprintf("%s s/1M msgs", formatSig(p.cpu)),
			fmt.Sprintf("%s disk B/msg", formatSig(p.disk)),
			fmt.Sprintf("%s writes/msg", formatSig(p.writes)),
			fmt.Sprintf("%s reads/msg", formatSig(p.reads)))
		if c.fsyncs >= 0 {
			parts = append(parts, fmt.Sprintf("%s fsyncs/msg", formatSig(p.fsyncs)))
		}
	}
	parts = append(parts, fmt.Sprintf("peak RSS %.1f MiB", mib(c.peakRSS)))
	return strings.Join(parts, ", ")
}

// costHowTo is the "How to read" paragraph above the table in
// docs/benchmarks.md.
func costHowTo() string { return strings.ReplaceAll(costHowToText, "¦", "`") }

// costHowToText is costHowTo with ¦ for each backquote.
const costHowToText = `How to read: each server runs as its own process (nats-server as ¦go install¦ builds the pinned
release, bus from ¦go build ./cmd/bus¦), so the kernel's counters for that process are the server's own cost,
without the clients'. Every figure covers the measured part of a run, from just before the publishers start (for the
JetStream consumers: after the stream is filled, before the consumer starts) until the last client is done, and is
divided by Msgs/run, the messages that part moves (a request counts once; a fan-out message once, however many
subscribers get it).

- **CPU s/1M msgs**: user + system CPU time of the server process, all threads, in seconds per million messages
  (the same number as µs per message), read from the process CPU-time clock (nanoseconds; ¦utime + stime¦ of
  ¦/proc/<pid>/stat¦ in 10 ms clock ticks where the clock is unreadable). Median, with min–max over the runs in
  parentheses; the ratio is bus / nats-server of the medians, and below 1.00 is better for bus. On this machine
  clients and servers share the cores, so throughput often shows the clients' limit; this column shows the server's work.
- **Peak RSS MiB**: ¦VmHWM¦ of ¦/proc/<pid>/status¦ at the end of the run: the highest resident set over the
  server's life, setup included. Median.
- **Disk B/msg**: the difference in ¦write_bytes¦ of ¦/proc/<pid>/io¦, per message: page-cache bytes the server
  dirtied for the disk. The kernel counts a whole 4 KiB page each time a clean page becomes dirty, so a server that
  fsyncs after every small append dirties its last page again each time (about 4 KiB or more per message), and one
  that fsyncs rarely shows about the bytes it appends. /proc does not count fsyncs; this is the closest it shows.
  0 for core NATS. Median.
- **Writes/msg**, **Reads/msg**: the differences in ¦syscw¦ and ¦syscr¦ of ¦/proc/<pid>/io¦, per message:
  write-family (write, writev, pwrite…) and read-family (read, readv, pread…) system calls, on sockets and files
  together, so they show how well a server batches. A read that finds nothing (EAGAIN) counts; sendmsg, epoll and
  futex calls do not. Median.
- **Fsyncs/msg bus**: fsyncs of the streams' active segments per message, the difference of the count of
  ¦bus_store_fsync_seconds¦ in bus's ¦/metrics¦ (consumer journals' fsyncs are not in it). Concurrent publishes
  share a commit, so with many publishers it falls below 1. nats-server counts none (it fsyncs on a timer, every
  2 minutes by default, not per message), and for core NATS there is nothing to count: "–". Median.

These columns need a quiet machine: other load steals cycles and cache and raises CPU per message, unevenly between
runs. The Machine section says how many cores other processes kept busy; above 0.25, treat differences within the
CPU's min–max as noise. ¦--quick¦ (one pair, fewer messages, no report written) only checks that the suite works.
`
