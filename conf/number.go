package conf

import (
	"math"
	"strconv"
	"strings"
)

// unitScale gives the multiplier of each size unit nats-server's config
// parser accepts after a number, lowercased: a bare letter is a power of
// 1000, with "b", "i" or "ib" a power of 1024. So 1k is 1000 and 1KB is 1024.
func unitScale(unit string) (int64, bool) {
	const letters = "kmgtpe"
	if unit == "" {
		return 1, true
	}
	i := strings.IndexByte(letters, unit[0])
	if i < 0 {
		return 0, false
	}
	base := int64(1000)
	switch unit[1:] {
	case "":
	case "b", "i", "ib":
		base = 1024
	default:
		return 0, false
	}
	scale := int64(1)
	for range i + 1 {
		scale *= base
	}
	return scale, true
}

// parseNumber reads an integer the way nats-server does: optional sign,
// decimal digits, then an optional unit (see unitScale), case-insensitive.
// Spaces around the number and before the unit are ignored. It reports false
// for anything else, including overflow of int64.
func parseNumber(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return 0, false
	}
	scale, ok := unitScale(strings.ToLower(strings.TrimSpace(s[end:])))
	if !ok || n > math.MaxInt64/scale || n < math.MinInt64/scale {
		return 0, false
	}
	return n * scale, true
}

// number converts a raw setting to an integer: a whole number from a file
// (JSON gives every number as float64), or a string for parseNumber, which
// is what environment variables and flags always hold.
func number(raw any) (int64, bool) {
	switch v := raw.(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case uint64:
		if v > math.MaxInt64 {
			return 0, false
		}
		return int64(v), true
	case float64:
		if v != math.Trunc(v) || v < math.MinInt64 || v >= math.MaxInt64 {
			return 0, false
		}
		return int64(v), true
	case string:
		return parseNumber(v)
	}
	return 0, false
}

// formatSize writes n with the largest power-of-1024 unit that divides it
// exactly, so it parses back to n: 1048576 is "1MB", 1000 stays "1000".
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if n != 0 && n%u.scale == 0 {
			return strconv.FormatInt(n/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
