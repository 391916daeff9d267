package main

import (
	"bufio"
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
		return cost{cpuSeconds: cpu, peakRSS: rss << 20, io: ioCounters{writeBytes: disk, syscw: writes, syscr: reads}, fsyncs: -1}
	}
	synced := func(c cost, fsyncs int64) cost { c.fsyncs = fsyncs; return c }
	res := []result{
		{sc: scenario{name: "core", msgs: 1_000_000},
			by: []series{
				{costs: []cost{run(2, 20, 0, 3000, 1000), run(1, 22, 0, 1000, 1000), run(3, 21, 0, 2000, 1000)}},
				{costs: []cost{run(0.5, 15, 0, 100, 500), run(1.5, 15, 0, 100, 500)}, failures: []string{"boom"}},
			}},
		{sc: scenario{name: "RSS"}, by: []series{{costs: []cost{run(0.1, 300, 0, 0, 0)}}, {costs: []cost{run(0.1, 100, 0, 0, 0)}}}},
		{sc: scenario{name: "JS", msgs: 10_000, jetstream: true},
			by: []series{{costs: []cost{run(0.85, 21, 1_720_000, 22400, 22400)}}, {na: errNotApplicable.Error() + ": JetStream not implemented"}}},
		{sc: scenario{name: "JS sync", msgs: 2_000, jetstream: true},
			by: []series{{costs: []cost{run(0.3, 21, 0, 4000, 4000)}}, {costs: []cost{synced(run(0.5, 19, 8_000_000, 4000, 4000), 2000), synced(run(0.5, 19, 8_000_000, 4000, 4000), 1000)}}}},
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
		{"core", "1M", "2.00 (1.00–3.00)", "1.00 (0.500–1.50)", "0.50", "21.0", "15.0", "0", "0", "0.0020", "0.0001", "0.0010", "0.0005", "–"},
		{"RSS", "–", "–", "–", "–", "300.0", "100.0", "–", "–", "–", "–", "–", "–", "–"},
		{"JS", "10k", "85.0", "n/a", "–", "21.0", "n/a", "172", "n/a", "2.24", "n/a", "2.24", "n/a", "–"},
		{"JS sync", "2k", "150", "250 (250–250)", "1.67", "21.0", "19.0", "0", "4000", "2.00", "2.00", "2.00", "2.00", "0.750"},
	}
	for i, want := range wantRows {
		if got := cells(lines[2+i]); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("row %d\n got %q\nwant %q", i, got, want)
		}
	}
}

func TestSumMetricAddsEverySeries(t *testing.T) {
	doc := `# HELP bus_store_fsync_seconds Latency
# TYPE bus_store_fsync_seconds histogram
bus_store_fsync_seconds_bucket{server_id="x",le="0.001"} 3
bus_store_fsync_seconds_sum{server_id="x"} 0.5
bus_store_fsync_seconds_count{server_id="x",server_name="a"} 1200
bus_store_fsync_seconds_count_other 7
bus_store_fsync_seconds_count 5
`
	got, err := sumMetric(bufio.NewScanner(strings.NewReader(doc)), fsyncMetric)
	if err != nil || got != 1205 {
		t.Fatalf("sumMetric = %d, %v; want 1205", got, err)
	}
}
