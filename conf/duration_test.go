package conf

import (
	"math"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw    any
		want   time.Duration
		wantOK bool
	}{
		{"2m", 2 * time.Minute, true},
		{"500ms", 500 * time.Millisecond, true},
		{"1h30m", 90 * time.Minute, true},
		{" 10s ", 10 * time.Second, true},
		{"-1s", -time.Second, true}, // parses; Validate rejects it
		{"0", 0, true},
		// Plain numbers are seconds, as nats-server accepts.
		{"120", 2 * time.Minute, true},
		{int(120), 2 * time.Minute, true},
		{int64(5), 5 * time.Second, true},
		{float64(5), 5 * time.Second, true}, // JSON numbers
		{1.5, 0, false},
		{"1.5", 0, false},
		{"2 minutes", 0, false},
		{"10 s", 0, false},
		{"", 0, false},
		{"2MB", 0, false},
		{true, 0, false},
		{nil, 0, false},
		{int64(math.MaxInt64 / int64(time.Second) * 2), 0, false},
	}
	for _, tt := range tests {
		got, ok := duration(tt.raw)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("duration(%#v) = %v, %v; want %v, %v", tt.raw, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{500 * time.Millisecond, "500ms"},
		{10 * time.Second, "10s"},
		{2 * time.Minute, "2m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{time.Hour + time.Second, "1h0m1s"},
	}
	for _, tt := range tests {
		got := formatDuration(tt.d)
		if got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
		if back, ok := duration(got); !ok || back != tt.d {
			t.Errorf("duration(formatDuration(%v)) = %v, %v", tt.d, back, ok)
		}
	}
}
