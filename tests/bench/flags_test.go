package main

import "testing"

func TestParseFlagsDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		pairs int
		out   string
	}{
		{"full_run_writes_the_report_with_7_pairs", nil, 7, "docs/benchmarks.md"},
		{"quick_is_one_pair_and_writes_nothing", []string{"--quick"}, 1, ""},
		{"quick_keeps_explicit_pairs_and_out", []string{"--quick", "--pairs", "3", "--out", "/tmp/b.md"}, 3, "/tmp/b.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := parseFlags(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if c.pairs != tt.pairs || c.out != tt.out {
				t.Errorf("parseFlags(%q): pairs %d, out %q; want %d, %q", tt.args, c.pairs, c.out, tt.pairs, tt.out)
			}
		})
	}
}
