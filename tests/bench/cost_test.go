package main

import (
	"strings"
	"testing"
)

func TestPerMessage(t *testing.T) {
	t.Parallel()
	c := cost{cpuSeconds: 0.5, io: ioCounters{writeBytes: 4096 * 1000, syscw: 250, syscr: 2000}}
	got := perMessage(c, 1000)
	want := perMsg{cpu: 500, disk: 4096, writes: 0.25, reads: 2}
	if !closeTo(got.cpu, want.cpu) || got.disk != want.disk || got.writes != want.writes || got.reads != want.reads {
		t.Errorf("perMessage = %+v, want %+v", got, want)
	}
}

func TestFormatSig(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{0: "0", 4268.4: "4268", 123.4: "123", 12.34: "12.3", 1.234: "1.23", 0.1234: "0.123", 0.001234: "0.0012"} {
		if got := formatSig(v); got != want {
			t.Errorf("formatSig(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestCostTable(t *testing.T) {
	t.Parallel()
	run := func(cpu float64, rss int64, disk, writes, reads int64) cost {
		return cost{cpuSeconds: cpu, peakRSS: rss << 20, io: ioCounters{writeBytes: disk, syscw: writes, syscr: reads}}
	}
	res := []result{
		{sc: scenario{name: "core", msgs: 1_000_000},
			by: [2]series{
				{costs: []cost{run(2, 20, 0, 3000, 1000), run(1, 22, 0, 1000, 1000), run(3, 21, 0, 2000, 1000)}},
				{costs: []cost{run(0.5, 15, 0, 100, 500), run(1.5, 15, 0, 100, 500)}, failures: []string{"boom"}},
			}},
		{sc: scenario{name: "RSS"}, by: [2]series{{costs: []cost{run(0.1, 300, 0, 0, 0)}}, {costs: []cost{run(0.1, 100, 0, 0, 0)}}}},
		{sc: scenario{name: "JS", msgs: 10_000, jetstream: true},
			by: [2]series{{costs: []cost{run(0.85, 21, 1_720_000, 22400, 22400)}}, {na: errNotApplicable.Error() + ": JetStream not implemented"}}},
	}
	tbl := costTable(res)
	lines := strings.Split(strings.TrimSpace(tbl), "\n")
	if len(lines) != 2+len(res) {
		t.Fatalf("table has %d lines, want %d:\n%s", len(lines), 2+len(res), tbl)
	}
	cells := func(line string) []string {
		f := strings.Split(strings.Trim(line, "|"), "|")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		return f
	}
	if got := cells(lines[0]); strings.Join(got, ",") != strings.Join(costHeader, ",") {
		t.Errorf("header = %q", got)
	}
	wantRows := [][]string{
		{"core", "1M", "2.00 (1.00–3.00)", "1.00 (0.500–1.50)", "0.50", "21.0", "15.0", "0", "0", "0.0020", "0.0001", "0.0010", "0.0005"},
		{"RSS", "–", "–", "–", "–", "300.0", "100.0", "–", "–", "–", "–", "–", "–"},
		{"JS", "10k", "85.0", "n/a", "–", "21.0", "n/a", "172", "n/a", "2.24", "n/a", "2.24", "n/a"},
	}
	for i, want := range wantRows {
		if got := cells(lines[2+i]); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("row %d\n got %q\nwant %q", i, got, want)
		}
	}
}
