package main

import "testing"

func TestSummarizeValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		vs     []float64
		want   stats
		spread float64
	}{
		{"none", nil, stats{}, 0},
		{"one", []float64{5}, stats{n: 1, median: 5, min: 5, max: 5}, 0},
		{"odd_count_unsorted", []float64{9, 1, 5, 3, 7, 2, 8}, stats{n: 7, median: 5, min: 1, max: 9}, 8.0 / 5},
		{"even_count_takes_mean_of_middle_two", []float64{4, 1, 3, 2}, stats{n: 4, median: 2.5, min: 1, max: 4}, 3 / 2.5},
		{"outlier_moves_range_not_median", []float64{10, 10, 11, 1000, 10}, stats{n: 5, median: 10, min: 10, max: 1000}, 99},
		{"zero_median_has_no_spread", []float64{0, 0, 1}, stats{n: 3, median: 0, min: 0, max: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := summarizeValues(append([]float64(nil), tt.vs...))
			if got != tt.want {
				t.Errorf("summarizeValues(%v) = %+v, want %+v", tt.vs, got, tt.want)
			}
			if s := got.spread(); !closeTo(s, tt.spread) {
				t.Errorf("spread = %v, want %v", s, tt.spread)
			}
		})
	}
}

func TestSummarizePicksOneMetric(t *testing.T) {
	t.Parallel()
	s := series{runs: [][]float64{{100, 7}, {300, 5}, {200, 6}}}
	if got := summarize(s, 1); got != (stats{n: 3, median: 6, min: 5, max: 7}) {
		t.Errorf("summarize(metric 1) = %+v", got)
	}
}
