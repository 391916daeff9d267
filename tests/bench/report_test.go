package main

import (
	"strings"
	"testing"
)

func TestFormatValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{1234567.4, "msgs/s", "1,234,567"},
		{999, "msgs/s", "999"},
		{254.94, "µs", "254.9"},
		{10, "MiB", "10.0"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]string{10_000: "10k", 1_000_000: "1M", 250_000: "250k", 1_500: "1500"} {
		if got := count(in); got != want {
			t.Errorf("count(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"pub→sub 1 KiB": "pub-sub-1-kib", "JS pub async 128 B, bus durability=interval": "js-pub-async-128-b-bus-durability-interval"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRowsRatioAndMissingValues(t *testing.T) {
	t.Parallel()
	res := []result{
		{sc: scenario{name: "core", metrics: []metric{{unit: "msgs/s"}}},
			by: []series{{runs: [][]float64{{100}, {300}, {200}}}, {runs: [][]float64{{150}, {250}}, failures: []string{"boom"}}}},
		{sc: scenario{name: "JS", metrics: []metric{{unit: "msgs/s"}}},
			by: []series{{runs: [][]float64{{10}}}, {na: errNotApplicable.Error() + ": JetStream not implemented"}}},
	}
	rs := rows(res)
	if got := rs[0]; got.ref != "200" || got.bus != "200 (1 of 3 runs failed)" || got.ratio != "1.00" || got.refSpread != "±50%" {
		t.Errorf("row 0 = %+v", got)
	}
	if got := rs[1]; got.bus != "n/a (JetStream not implemented)" || got.ratio != "–" {
		t.Errorf("row 1 = %+v", got)
	}
	if tbl := table(rs); !strings.Contains(tbl, "| core ") || strings.Count(tbl, "\n") != 4 {
		t.Errorf("table:\n%s", tbl)
	}
}
