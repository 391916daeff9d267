package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// benchStats is what one `nats bench` run reports for the client role we
// asked about. Latencies are zero when the tool printed none (subscribers).
type benchStats struct {
	rate float64 // messages per second, aggregated over all clients
	p50  float64 // microseconds
	p99  float64 // microseconds
}

var (
	rateRe = regexp.MustCompile(`stats: ([\d,]+(?:\.\d+)?) msgs/sec`)
	p50Re  = regexp.MustCompile(`P50:? ([\d,]+(?:\.\d+)?)us`)
	p99Re  = regexp.MustCompile(`P99:? ([\d,]+(?:\.\d+)?)us`)
)

// parseBench finds the stats line of role (a label the tool prints, such
// as "Core NATS subscriber" or "JetStream durable consumer (fetch)") in
// the combined output of `nats bench` and returns its rate and, when the
// tool printed them, the P50 and P99 latencies. With several clients the
// tool prints per-client lines first and then "<role> aggregated stats";
// the aggregated line wins, and its latencies are on the line after it.
func parseBench(out, role string) (benchStats, error) {
	lines := strings.Split(out, "\n")
	at := -1
	for i, l := range lines {
		if !strings.Contains(l, role+" stats:") && !strings.Contains(l, role+" aggregated stats:") {
			continue
		}
		if at < 0 || strings.Contains(l, "aggregated") {
			at = i
		}
	}
	if at < 0 {
		return benchStats{}, fmt.Errorf("parse: no %q stats in output", role)
	}
	m := rateRe.FindStringSubmatch(lines[at])
	if m == nil {
		return benchStats{}, fmt.Errorf("parse: no rate in %q", lines[at])
	}
	var st benchStats
	var err error
	if st.rate, err = parseNumber(m[1]); err != nil {
		return benchStats{}, err
	}
	// Latencies sit on the stats line itself (one client) or on the
	// "latencies per operation" line right after it (aggregated).
	tail := lines[at]
	if at+1 < len(lines) {
		tail += "\n" + lines[at+1]
	}
	if m := p50Re.FindStringSubmatch(tail); m != nil {
		if st.p50, err = parseNumber(m[1]); err != nil {
			return benchStats{}, err
		}
	}
	if m := p99Re.FindStringSubmatch(tail); m != nil {
		if st.p99, err = parseNumber(m[1]); err != nil {
			return benchStats{}, err
		}
	}
	return st, nil
}

// parseNumber reads a number as humanize prints it: "1,234,567" or "1,263.54".
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("parse: number %q: %w", s, err)
	}
	return v, nil
}
