// Package alerts checks the shipped Prometheus alerting rules
// (bus.rules.yml) with Prometheus's own rule parser and PromQL engine: the
// file must load as Prometheus loads it, and each alert must fire on the
// situation it names and stay quiet on a healthy one, evaluated over
// series recorded in the notation of promtool's rule tests. Prometheus is
// a dependency of this test package only.
package alerts

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
)

// step is the interval between recorded samples (and rule evaluations).
const step = time.Minute

// loadRules parses bus.rules.yml as Prometheus does and returns its
// alerting rules by name.
func loadRules(t *testing.T) map[string]rulefmt.Rule {
	t.Helper()
	groups, errs := rulefmt.ParseFile("bus.rules.yml", false, model.UTF8Validation, parser.NewParser(parser.Options{}), nil)
	if len(errs) > 0 {
		t.Fatalf("bus.rules.yml: %v", errs)
	}
	out := map[string]rulefmt.Rule{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Fatalf("group %s: a recording rule %q; only alerts are shipped", g.Name, r.Record)
			}
			if _, dup := out[r.Alert]; dup {
				t.Fatalf("alert %s twice", r.Alert)
			}
			out[r.Alert] = r
		}
	}
	return out
}

// sample is one recorded float sample.
type sample struct {
	t int64 // ms
	f float64
}

func (s sample) T() int64                      { return s.t }
func (s sample) ST() int64                     { return 0 }
func (s sample) F() float64                    { return s.f }
func (s sample) H() *histogram.Histogram       { return nil }
func (s sample) FH() *histogram.FloatHistogram { return nil }
func (s sample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s sample) Copy() chunks.Sample           { return s }

// record turns series descriptions ("name{labels} 0+1x30", one sample
// per step from time 0; "_" for none) into a queryable.
func record(t *testing.T, descs ...string) storage.Queryable {
	t.Helper()
	p := parser.NewParser(parser.Options{})
	var all []storage.Series
	for _, d := range descs {
		lset, values, err := p.ParseSeriesDesc(d)
		if err != nil {
			t.Fatalf("series %q: %v", d, err)
		}
		var samples []chunks.Sample
		for i, v := range values {
			if !v.Omitted {
				samples = append(samples, sample{t: int64(i) * step.Milliseconds(), f: v.Value})
			}
		}
		all = append(all, storage.NewListSeries(lset, samples))
	}
	slices.SortFunc(all, func(a, b storage.Series) int { return labels.Compare(a.Labels(), b.Labels()) })
	return &storage.MockQueryable{MockQuerier: &storage.MockQuerier{
		SelectMockFunction: func(_ bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
			var hit []storage.Series
		next:
			for _, s := range all {
				for _, m := range ms {
					if !m.Matches(s.Labels().Get(m.Name)) {
						continue next
					}
				}
				hit = append(hit, s)
			}
			return &seriesSet{list: hit, i: -1}
		},
	}}
}

// seriesSet is a storage.SeriesSet over a sorted slice.
type seriesSet struct {
	list []storage.Series
	i    int
}

func (s *seriesSet) Next() bool                        { s.i++; return s.i < len(s.list) }
func (s *seriesSet) At() storage.Series                { return s.list[s.i] }
func (s *seriesSet) Err() error                        { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return nil }

// firing evaluates rule at minute `at` the way Prometheus's rule manager
// does: the expression must have held at every evaluation through its
// `for` duration. It returns the label sets that fire.
func firing(t *testing.T, rule rulefmt.Rule, q storage.Queryable, at int) []string {
	t.Helper()
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	hold := map[string]int{}
	evals := int(time.Duration(rule.For)/step) + 1
	for k := at - evals + 1; k <= at; k++ {
		qry, err := engine.NewInstantQuery(context.Background(), q, nil, rule.Expr, time.UnixMilli(int64(k)*step.Milliseconds()))
		if err != nil {
			t.Fatalf("%s: %v", rule.Alert, err)
		}
		res := qry.Exec(context.Background())
		if res.Err != nil {
			t.Fatalf("%s: %v", rule.Alert, res.Err)
		}
		vec, err := res.Vector()
		if err != nil {
			t.Fatalf("%s: %v", rule.Alert, err)
		}
		for _, s := range vec {
			hold[s.Metric.String()]++
		}
		qry.Close()
	}
	var out []string
	for ls, n := range hold {
		if n == evals {
			out = append(out, ls)
		}
	}
	slices.Sort(out)
	return out
}

// Each alert fires on the series of its situation (naming the object in
// trouble) and not on a healthy neighbour's.
func TestAlertsFireOnRecordedSeries(t *testing.T) {
	t.Parallel()
	rules := loadRules(t)
	const (
		ok  = `{server_id="N1",account="$G",stream_name="JOBS",consumer_name="OK"}`
		bad = `{server_id="N1",account="$G",stream_name="JOBS",consumer_name="SLOW"}`
	)
	cases := []struct {
		alert  string
		series []string
		at     int    // minute of the evaluation
		want   string // a label the firing alert carries; "" for silence
	}{
		{"BusConsumerLagGrowing", []string{
			"jetstream_consumer_num_pending" + bad + " 0+50x40",
			"jetstream_consumer_num_pending" + ok + " 500+0x40",
		}, 40, `consumer_name="SLOW"`},
		{"BusConsumerLagGrowing", []string{
			"jetstream_consumer_num_pending" + bad + " 0+50x20 1000-50x20",
		}, 40, ""},
		{"BusConsumerLagOld", []string{
			"bus_consumer_lag_seconds" + bad + " 0+60x30",
			"bus_consumer_lag_seconds" + ok + " 1+0x30",
		}, 30, `consumer_name="SLOW"`},
		{"BusDeadLetter", []string{
			"bus_consumer_dead_lettered_total" + bad + " 0x10 1x10",
			"bus_consumer_dead_lettered_total" + ok + " 3x20",
		}, 12, `consumer_name="SLOW"`},
		{"BusDeadLetter", []string{
			"bus_consumer_dead_lettered_total" + bad + " 0x10 1x10",
		}, 20, ""},
		{"BusDeadLetterLost", []string{
			"bus_consumer_dead_letters_lost_total" + bad + " 0x5 1x5",
		}, 7, `consumer_name="SLOW"`},
		{"BusDeadLetterQueueNotEmpty", []string{
			`jetstream_stream_total_messages{server_id="N1",account="$G",stream_name="DLQ"} 0x5 2x10`,
			`bus_stream_dead_letter_queue{server_id="N1",account="$G",stream_name="DLQ"} 1x15`,
			`jetstream_stream_total_messages{server_id="N1",account="$G",stream_name="JOBS"} 100x15`,
		}, 15, `stream_name="DLQ"`},
		{"BusDeadLetterQueueNotEmpty", []string{
			`jetstream_stream_total_messages{server_id="N1",account="$G",stream_name="DLQ"} 0x15`,
			`bus_stream_dead_letter_queue{server_id="N1",account="$G",stream_name="DLQ"} 1x15`,
			`jetstream_stream_total_messages{server_id="N1",account="$G",stream_name="JOBS"} 100x15`,
		}, 15, ""},
		{"BusLeafNodeDown", []string{
			`bus_leafnode_up{server_id="N1",remote="nats://hub1:7422"} 1x5 0x5`,
			`bus_leafnode_up{server_id="N1",remote="nats://hub2:7422"} 1x10`,
		}, 9, `remote="nats://hub1:7422"`},
		{"BusLeafNodeDown", []string{
			`bus_leafnode_up{server_id="N1",remote="nats://hub1:7422"} 1x5 0x1 1x4`,
		}, 9, ""},
		{"BusStreamDamaged", []string{
			`bus_jetstream_damaged_streams{server_id="N1",server_name="a"} 1x3`,
		}, 3, `server_id="N1"`},
		// 100 fsyncs a minute, nearly all between 250 ms and 500 ms.
		{"BusFsyncSlow", fsyncs("0.5"), 30, `server_id="N1"`},
		{"BusFsyncSlow", fsyncs("0.0025"), 30, ""},
		{"BusStoreDiskNearlyFull", []string{
			`bus_store_free_bytes{server_id="N1",server_name="a"} 9x15`,
			`bus_store_size_bytes{server_id="N1",server_name="a"} 100x15`,
		}, 15, `server_id="N1"`},
		{"BusStoreDiskNearlyFull", []string{
			`bus_store_free_bytes{server_id="N1",server_name="a"} 50x15`,
			`bus_store_size_bytes{server_id="N1",server_name="a"} 100x15`,
		}, 15, ""},
		{"BusSlowConsumers", []string{
			`bus_slow_consumers_total{server_id="N1"} 0x5 2x5`,
		}, 6, `server_id="N1"`},
		{"BusSlowConsumers", []string{
			`bus_slow_consumers_total{server_id="N1"} 2x20`,
		}, 20, ""},
		{"BusAuthFailures", []string{
			`bus_auth_failures_total{server_id="N1"} 0+10x10`,
		}, 10, `server_id="N1"`},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		rule, found := rules[tc.alert]
		if !found {
			t.Fatalf("no alert %s in bus.rules.yml", tc.alert)
		}
		tested[tc.alert] = true
		got := firing(t, rule, record(t, tc.series...), tc.at)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s fires on a healthy system: %v", tc.alert, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s fires for %v, want one alert with %s", tc.alert, got, tc.want)
		}
	}
	for name := range rules {
		if !tested[name] {
			t.Errorf("alert %s has no recorded case", name)
		}
	}
}

// fsyncs records a bus_store_fsync_seconds histogram with 100 fsyncs a
// minute: one within a millisecond, the other 99 in the bucket up to
// upper.
func fsyncs(upper string) []string {
	var out []string
	rate := "1"
	for _, le := range []string{"0.001", "0.0025", "0.25", "0.5", "+Inf"} {
		if le == upper {
			rate = "100"
		}
		out = append(out, `bus_store_fsync_seconds_bucket{server_id="N1",server_name="a",le="`+le+`"} 0+`+rate+`x40`)
	}
	return out
}
