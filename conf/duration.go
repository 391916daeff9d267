package conf

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// duration converts a raw setting to a time.Duration. A string is a Go
// duration ("2m", "500ms"); a whole number, or a string of digits, is a count
// of seconds, which nats-server still accepts for backward compatibility.
func duration(raw any) (time.Duration, bool) {
	var secs int64
	switch v := raw.(type) {
	case string:
		s := strings.TrimSpace(v)
		if d, err := time.ParseDuration(s); err == nil {
			return d, true
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		secs = n
	default:
		n, ok := number(v)
		if !ok {
			return 0, false
		}
		secs = n
	}
	if secs > math.MaxInt64/int64(time.Second) || secs < math.MinInt64/int64(time.Second) {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}

// formatDuration writes d as time.Duration.String does, without the zero
// trailing units: "2m" rather than "2m0s", "1h" rather than "1h0m0s".
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
