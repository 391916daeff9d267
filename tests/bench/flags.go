package main

import (
	"flag"
	"fmt"
	"regexp"
)

// config is the command line.
type config struct {
	cache   string
	pairs   int
	quick   bool
	only    *regexp.Regexp
	out     string // report path, relative to the module root unless absolute; "" skips it
	note    string
	busRev  string // git revision to build bus from; "" for the working tree
	perfDir string // where to write `perf record` profiles of each run; "" for none
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.cache, "cache", defaultCache(), "directory for the installed tools")
	fs.IntVar(&c.pairs, "pairs", 7, "runs per server and scenario, alternating nats-server and bus (1 with --quick)")
	fs.BoolVar(&c.quick, "quick", false, "fewer messages and scenarios, one pair, no report file: a smoke test (under a minute)")
	only := fs.String("only", "", "run only scenarios whose name matches this regexp")
	fs.StringVar(&c.out, "out", "docs/benchmarks.md", "report path, relative to the module root; empty to skip (empty with --quick)")
	fs.StringVar(&c.note, "note", "", "free text for the report's machine section")
	fs.StringVar(&c.busRev, "bus-rev", "", "build bus from this git revision instead of the working tree")
	fs.StringVar(&c.perfDir, "perf", "", "record each server run with `perf record -g` into this directory")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.quick && !set["pairs"] {
		c.pairs = 1
	}
	if c.quick && !set["out"] {
		c.out = "" // a quick run's numbers must not replace a full run's report
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.pairs < 1 {
		return config{}, fmt.Errorf("--pairs must be at least 1")
	}
	var err error
	if c.only, err = regexp.Compile(*only); err != nil {
		return config{}, fmt.Errorf("--only: %w", err)
	}
	return c, nil
}
