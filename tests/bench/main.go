// Command bench runs the same client workloads against the reference
// nats-server and bus on this machine and reports bus/nats-server ratios.
//
//	go run ./tests/bench [--quick] [--pairs N] [--cache DIR] [--only REGEXP]
//
// It installs the pinned nats-server and nats CLI into the cache, builds
// bus, runs every scenario on fresh server processes in alternating order,
// prints the tables and writes them with the machine description to
// docs/benchmarks.md. Beside throughput and latency it reports what each
// server process spent per message, from its /proc counters: CPU time,
// peak RSS, bytes dirtied for disk and read/write system calls. Clients are the nats CLI (`nats bench`) where it has
// the workload, else small nats.go or raw-protocol clients in this process.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := raiseFileLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: raise open-files limit:", err)
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "bus-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// bus is built into this run's own directory: the cache is shared by
	// everyone on the machine, and another run may be rebuilding it.
	t, err := install(ctx, cfg.cache, filepath.Join(tmp, "bus"), root, cfg.busRev, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}

	var list []scenario
	for _, sc := range scenarios(sizesFor(cfg.quick)) {
		if cfg.only.MatchString(sc.name) {
			list = append(list, sc)
		}
	}
	d := docs{started: time.Now(), machine: describeMachine(), tools: t, pairs: cfg.pairs, note: cfg.note,
		flavors: []flavor{referenceFlavor(t), busFlavor(t)},
		command: strings.TrimSpace("go run ./tests/bench " + strings.Join(os.Args[1:], " "))}
	if path, ok := mosquittoPath(); ok {
		d.flavors = append(d.flavors, mosquittoFlavor(path))
	}
	cpuStart, cpuErr := readCPUUse()
	r := &runner{flavors: d.flavors, tools: t, pairs: cfg.pairs, tmp: tmp, perfDir: cfg.perfDir, log: os.Stderr}
	results := r.runAll(ctx, list)
	d.finished = time.Now()
	if cpuEnd, err := readCPUUse(); err == nil && cpuErr == nil {
		d.othersCores = othersCores(cpuStart, cpuEnd)
	}
	fmt.Printf("\n%s\n%s\n%s\n", table(rows(results)), costTable(results), mqttTable(results, d.flavors))
	if ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "bench: interrupted; report not written")
		return 130
	}
	if cfg.out == "" {
		return 0
	}
	path := cfg.out
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	if err := writeDocs(path, d, results); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s (%s)\n", path, d.finished.Sub(d.started).Round(time.Second))
	return 0
}
