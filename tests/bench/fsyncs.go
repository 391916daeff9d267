package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Fsyncs. /proc counts no fsyncs, so for bus the run reads them from its
// own /metrics: the count of bus_store_fsync_seconds, every fsync of a
// stream's active segment (consumer journals are not in it). nats-server
// has no such counter (and fsyncs on its own timer, not per message), so
// its column is not shown.

// fsyncMetric is the histogram whose _count is the segment fsyncs.
const fsyncMetric = "bus_store_fsync_seconds_count"

// scrapeFsyncs returns the sum of fsyncMetric over its series at httpURL.
func scrapeFsyncs(httpURL string) (int64, error) {
	var n int64
	err := getMonitor(context.Background(), httpURL, "/metrics", func(body io.Reader) error {
		var err error
		n, err = sumMetric(bufio.NewScanner(body), fsyncMetric)
		return err
	})
	return n, err
}

// sumMetric adds the values of every sample of name in a Prometheus text
// exposition (name or name{labels}, then the value).
func sumMetric(sc *bufio.Scanner, name string) (int64, error) {
	var sum int64
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fields) == 0 {
			return 0, fmt.Errorf("parse: %q has no value", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("parse: %q: %w", line, err)
		}
		sum += int64(v)
	}
	return sum, sc.Err()
}
