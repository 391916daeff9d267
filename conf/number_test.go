package conf

import (
	"math"
	"testing"
)

func TestParseNumberUnits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"4096", 4096},
		{"-1", -1},
		{"+7", 7},
		// A bare letter is a power of 1000, as in nats-server.
		{"1k", 1000},
		{"1K", 1000},
		{"1m", 1000_000},
		{"1g", 1000_000_000},
		{"1t", 1e12},
		{"1p", 1e15},
		{"1e", 1e18},
		// With b, i or ib it is a power of 1024, in any case.
		{"1kb", 1024},
		{"512KB", 512 << 10},
		{"1Ki", 1024},
		{"1KiB", 1024},
		{"1MB", 1 << 20},
		{"64MB", 64 << 20},
		{"1mib", 1 << 20},
		{"1GB", 1 << 30},
		{"1Gi", 1 << 30},
		{"1TB", 1 << 40},
		{"1PB", 1 << 50},
		{"7EB", 7 << 60},
		{"-1KB", -1024},
		{" 64 MB ", 64 << 20},
		{"9223372036854775807", math.MaxInt64},
	}
	for _, tt := range tests {
		got, ok := parseNumber(tt.in)
		if !ok || got != tt.want {
			t.Errorf("parseNumber(%q) = %d, %v; want %d, true", tt.in, got, ok, tt.want)
		}
	}
}

func TestParseNumberRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", " ", "abc", "MB", "-", "1.5MB", "1.0", "1e3", "1XB", "1kbb", "1 k b", "1b", "0x10",
		"1_000", "8EB", "9223372036854775808", "-9EB", "1,024",
	} {
		if got, ok := parseNumber(in); ok {
			t.Errorf("parseNumber(%q) = %d, true; want false", in, got)
		}
	}
}

func TestNumberFromFileTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw    any
		want   int64
		wantOK bool
	}{
		{int(5), 5, true},
		{int64(-5), -5, true},
		{int32(5), 5, true},
		{uint64(5), 5, true},
		{uint64(math.MaxUint64), 0, false},
		{float64(1 << 20), 1 << 20, true}, // JSON numbers
		{1.5, 0, false},
		{math.Inf(1), 0, false},
		{math.NaN(), 0, false},
		{1e19, 0, false},
		{"2KB", 2048, true},
		{true, 0, false},
		{nil, 0, false},
		{[]any{1}, 0, false},
	}
	for _, tt := range tests {
		got, ok := number(tt.raw)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("number(%#v) = %d, %v; want %d, %v", tt.raw, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestFormatSizeRoundTrips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{1000, "1000"},
		{1536, "1536"},
		{4096, "4KB"},
		{1 << 20, "1MB"},
		{64 << 20, "64MB"},
		{3 << 30, "3GB"},
		{-1024, "-1KB"},
	}
	for _, tt := range tests {
		got := formatSize(tt.n)
		if got != tt.want {
			t.Errorf("formatSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
		if back, ok := parseNumber(got); !ok || back != tt.n {
			t.Errorf("parseNumber(formatSize(%d)) = %d, %v", tt.n, back, ok)
		}
	}
}
