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
	fs.IntVar(&c.pairs, "pairs", 3, "runs per server and scenario, alternating nats-server and bus")
	fs.BoolVar(&c.quick, "quick", false, "fewer messages and scenarios (under two minutes)")
	only := fs.String("only", "", "run only scenarios whose name matches this regexp")
	fs.StringVar(&c.out, "out", "docs/benchmarks.md", "report path, relative to the module root; empty to skip")
	fs.StringVar(&c.note, "note", "", "free text for the report's machine section")
	fs.StringVar(&c.busRev, "bus-rev", "", "build bus from this git revision instead of the working tree")
	fs.StringVar(&c.perfDir, "perf", "", "record each server run with `perf record -g` into this directory")
	if err := fs.Parse(args); err != nil {
		return config{}, err
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
