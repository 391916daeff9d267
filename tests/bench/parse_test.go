package main

import (
	"strings"
	"testing"
)

// Outputs as natscli v0.5.0 prints them, trimmed to the lines that matter.
const (
	oneSubscriber = `10:17:19 Starting Core NATS subscriber benchmark [clients=1, msg-size=16 B, msgs=100,000, multi-subject=false, subject=foo]
10:17:19 [1] Starting Core NATS subscriber, expecting 100,000 messages

NATS Core NATS subscriber stats: 641,859 msgs/sec ~ 9.8 MiB/sec
`
	tenSubscribers = `
  [1] 212,149 msgs/sec ~ 3.2 MiB/sec (100,000 msgs)
  [2] 190,618 msgs/sec ~ 2.9 MiB/sec (100,000 msgs)

 NATS Core NATS subscriber aggregated stats: 1,497,014 msgs/sec ~ 23 MiB/sec
 message rates min 156,750 | avg 178,677 | max 212,149 | stddev 15,474 msgs
`
	fourPublishers = `
  [1] 87,707 msgs/sec ~ 1.3 MiB/sec ~ min: 0.06us ~ avg: 0.15us ~ max: 171.99us ~ P50: 0.08us ~ P90: 0.09us ~ P99: 0.17us ~ P99.9: 15.13us (25,000 msgs)

 NATS Core NATS publisher aggregated stats: 215,758 msgs/sec ~ 3.3 MiB/sec
 latencies per operation min 0.06us | avg 0.62us | max 19,657.07us | stddev 91.50us | P50 0.07us | P90 0.09us | P99 0.18us | P99.9: 7.93us
`
	requester = `
NATS Core NATS service requester stats: 2,651 msgs/sec ~ 331 KiB/sec ~ min: 86.95us ~ avg: 376.69us ~ max: 42,377.77us ~ P50: 330.09us ~ P90: 560.21us ~ P99: 1,263.54us ~ P99.9: 5,651.70us
`
	fetch = `
NATS JetStream durable consumer (fetch) stats: 63,209 msgs/sec ~ 7.7 MiB/sec ~ min: 27.23us ~ avg: 104.58us ~ max: 684.85us ~ P50: 55.72us ~ P90: 195.30us ~ P99: 574.68us ~ P99.9: 684.85us
`
)

func TestParseBench(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out, role string
		want            benchStats
	}{
		{"one_subscriber", oneSubscriber, "Core NATS subscriber", benchStats{rate: 641859}},
		{"aggregated_subscribers_win_over_per_client_lines", tenSubscribers, "Core NATS subscriber", benchStats{rate: 1497014}},
		{"aggregated_latencies_on_next_line", fourPublishers, "Core NATS publisher", benchStats{rate: 215758, p50: 0.07, p99: 0.18}},
		{"requester_latencies_with_grouping", requester, "Core NATS service requester", benchStats{rate: 2651, p50: 330.09, p99: 1263.54}},
		{"jetstream_consumer_label_with_parentheses", fetch, "JetStream durable consumer (fetch)", benchStats{rate: 63209, p50: 55.72, p99: 574.68}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseBench(tt.out, tt.role)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("parseBench = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseBenchMissingRole(t *testing.T) {
	t.Parallel()
	if _, err := parseBench(oneSubscriber, "Core NATS publisher"); err == nil {
		t.Fatal("parseBench found publisher stats in subscriber output")
	}
}

func TestParseVmRSS(t *testing.T) {
	t.Parallel()
	status := "Name:\tnats-server\nVmPeak:\t 1234 kB\nVmRSS:\t   15808 kB\nRssAnon:\t 9000 kB\n"
	got, err := parseVmRSS(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(15808 << 10); got != want {
		t.Errorf("parseVmRSS = %d, want %d", got, want)
	}
	if _, err := parseVmRSS(strings.ReplaceAll(status, "VmRSS", "VmHWM")); err == nil {
		t.Error("parseVmRSS without a VmRSS line: no error")
	}
}
