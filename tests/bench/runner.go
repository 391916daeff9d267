package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// errNotApplicable marks a scenario the server cannot run (JetStream on a
// server that does not advertise it).
var errNotApplicable = errors.New("not applicable")

// series is what one flavor produced for one scenario.
type series struct {
	runs     [][]float64 // per successful run, one value per metric
	costs    []cost      // per successful run, what the server spent on its measured part
	failures []string    // one line per failed run
	na       string      // why the scenario was not run; "" when it was
	cmds     []string    // what the first run executed
}

// result holds a scenario's series for each flavor, in runner.flavors
// order: the reference, bus, then any MQTT-only broker (whose series is
// empty for the other scenarios).
type result struct {
	sc  scenario
	by  []series
	dur time.Duration
}

// runner runs scenarios on the flavors, alternating them run by run
// (reference first) so that slow drifts of the machine hit all alike. An
// MQTT-only flavor runs the MQTT scenarios only.
type runner struct {
	flavors []flavor
	tools   tools
	pairs   int
	tmp     string // parent of every run's scratch directory
	perfDir string // where `perf record` writes a profile of each run; "" for none
	log     io.Writer
}

// runAll runs every scenario and returns what completed; after ctx ends
// (Ctrl-C) it stops starting runs and returns early.
func (r *runner) runAll(ctx context.Context, list []scenario) []result {
	var results []result
	for i, sc := range list {
		start := time.Now()
		res := result{sc: sc, by: make([]series, len(r.flavors))}
		for pair := range r.pairs {
			for f, fl := range r.flavors {
				s := &res.by[f]
				if s.na != "" || ctx.Err() != nil || (fl.mqttOnly && !sc.mqtt) {
					continue
				}
				runStart := time.Now()
				vals, c, cmds, err := r.once(ctx, sc, fl, pair+1)
				took := time.Since(runStart).Round(100 * time.Millisecond)
				if s.cmds == nil {
					s.cmds = cmds
				}
				switch {
				case errors.Is(err, errNotApplicable):
					s.na = err.Error()
					fmt.Fprintf(r.log, "[%d/%d] %s · %s: n/a (%v)\n", i+1, len(list), sc.name, fl.name, err)
				case err != nil:
					if ctx.Err() != nil {
						break
					}
					s.failures = append(s.failures, firstLine(err.Error()))
					fmt.Fprintf(r.log, "[%d/%d] %s · %s #%d: FAILED: %v\n", i+1, len(list), sc.name, fl.name, pair+1, err)
				default:
					s.runs = append(s.runs, vals)
					s.costs = append(s.costs, c)
					fmt.Fprintf(r.log, "[%d/%d] %s · %s #%d: %s; %s (%v)\n", i+1, len(list), sc.name, fl.name, pair+1, describe(sc, vals), describeCost(sc, c), took)
				}
			}
		}
		if ctx.Err() != nil {
			return results
		}
		res.dur = time.Since(start)
		fmt.Fprintf(r.log, "[%d/%d] %s: %s\n", i+1, len(list), sc.name, res.dur.Round(100*time.Millisecond))
		results = append(results, res)
	}
	return results
}

// once starts a fresh server of flavor f, runs sc against it and stops
// the server, all within sc.timeout. The cost is the server's from the
// last env.beginMeasure to the end of sc.run.
func (r *runner) once(ctx context.Context, sc scenario, f flavor, run int) ([]float64, cost, []string, error) {
	dir, err := os.MkdirTemp(r.tmp, "run-*")
	if err != nil {
		return nil, cost{}, nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, sc.timeout)
	defer cancel()
	srv, err := startServer(ctx, f, dir, sc.jetstream, listeners{websocket: sc.websocket, mqtt: sc.mqtt, accounts: sc.accounts})
	if err != nil {
		return nil, cost{}, nil, err
	}
	defer func() {
		if err := srv.stop(); err != nil {
			fmt.Fprintf(r.log, "    %s: stop: %v\n", f.name, err)
		}
	}()
	if sc.jetstream && !srv.jetstream && !f.mqttOnly {
		return nil, cost{}, nil, fmt.Errorf("%w: JetStream not implemented", errNotApplicable)
	}
	var prof *profiler
	if r.perfDir != "" {
		if prof, err = startPerf(ctx, r.perfDir, sc.name, f.name, run, srv.cmd.Process.Pid); err != nil {
			return nil, cost{}, nil, err
		}
	}
	e := &env{flavor: f.name, srv: srv, tools: r.tools, dir: dir}
	if err := e.beginMeasure(); err != nil {
		return nil, cost{}, nil, err
	}
	vals, err := sc.run(ctx, e)
	var c cost
	if err == nil {
		c, err = e.endMeasure()
	}
	if prof != nil {
		if perr := prof.stop(); perr != nil {
			fmt.Fprintf(r.log, "    perf: %v\n", perr)
		} else {
			fmt.Fprintf(r.log, "    profile: perf report -i %s\n", prof.path)
		}
	}
	if err == nil && len(vals) != len(sc.metrics) {
		err = fmt.Errorf("scenario returned %d values for %d metrics", len(vals), len(sc.metrics))
	}
	if err != nil {
		return nil, cost{}, e.cmds, fmt.Errorf("%w\n  server log:\n%s", err, srv.logTail())
	}
	return vals, c, e.cmds, nil
}

// describe formats one run's values for the progress log.
func describe(sc scenario, vals []float64) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		m := sc.metrics[i]
		parts[i] = strings.TrimSpace(m.label + " " + formatValue(v, m.unit) + " " + m.unit)
	}
	return strings.Join(parts, ", ")
}

// stats summarises metric m over the successful runs of s.
type stats struct {
	n                int
	median, min, max float64
}

func summarize(s series, m int) stats {
	vs := make([]float64, len(s.runs))
	for i, run := range s.runs {
		vs[i] = run[m]
	}
	return summarizeValues(vs)
}

// summarizeValues is the median, minimum and maximum of vs (sorted in
// place); the zero stats for none. The median of an even count is the
// mean of the middle two.
func summarizeValues(vs []float64) stats {
	if len(vs) == 0 {
		return stats{}
	}
	slices.Sort(vs)
	st := stats{n: len(vs), min: vs[0], max: vs[len(vs)-1]}
	if len(vs)%2 == 1 {
		st.median = vs[len(vs)/2]
	} else {
		st.median = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return st
}

// spread is (max−min)/median, the run-to-run noise of one flavor.
func (st stats) spread() float64 {
	if st.median == 0 {
		return 0
	}
	return (st.max - st.min) / st.median
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
