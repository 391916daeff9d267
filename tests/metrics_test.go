package tests

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/bus-dev/bus/server"
)

// scrape is one parsed /metrics answer.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics fetches and parses /metrics of s.
func scrapeMetrics(t *testing.T, s *server.Server) scrape {
	t.Helper()
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// find returns the sample of family name whose labels include want
// ("k=v" pairs), or nil.
func (sc scrape) find(name string, want ...string) *dto.Metric {
	f := sc[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}

// value is the gauge or counter value of a sample; the test fails when
// it is missing.
func (sc scrape) value(t *testing.T, name string, want ...string) float64 {
	t.Helper()
	m := sc.find(name, want...)
	if m == nil {
		t.Fatalf("no %s%v in /metrics", name, want)
	}
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	t.Fatalf("%s%v has no value", name, want)
	return 0
}

// A server with a work stream, a dead-letter stream and two consumers
// reports what they hold and did: exporter-named stream and consumer
// gauges, bus's publish, dead-letter and lag series, the store's
// histograms, and the server's traffic.
func TestMetricsReportStreamsConsumersAndDeadLetters(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, HTTPPort: -1})
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.jobs"}}); err != nil {
		t.Fatal(err)
	}
	createConsumerRaw(t, nc, "JOBS", "W", `{"durable_name":"W","ack_policy":"explicit","x_bus_dead_letter_subject":"dlq.jobs"}`)
	for i := range 5 {
		if _, err := js.Publish(ctx, fmt.Sprintf("jobs.%d", i), []byte("job"), jetstream.WithMsgID(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if ack, err := js.Publish(ctx, "jobs.0", []byte("job"), jetstream.WithMsgID("0")); err != nil || !ack.Duplicate {
		t.Fatalf("duplicate publish: %+v %v", ack, err)
	}
	// Created after the publishes, IDLE has nothing to do.
	createConsumerRaw(t, nc, "JOBS", "IDLE", `{"durable_name":"IDLE","ack_policy":"explicit","deliver_policy":"new"}`)
	c, err := st.Consumer(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(2, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for m := range b.Messages() {
		if i == 0 {
			err = m.DoubleAck(ctx)
		} else {
			err = m.Term()
		}
		if err != nil {
			t.Fatal(err)
		}
		i++
	}
	var sc scrape
	eventually(t, 5*time.Second, func() bool {
		sc = scrapeMetrics(t, s)
		m := sc.find("bus_consumer_dead_lettered_total", "consumer_name=W")
		d := sc.find("jetstream_stream_total_messages", "stream_name=DLQ")
		return m != nil && m.Counter.GetValue() == 1 && d != nil && d.Gauge.GetValue() == 1
	})
	jobs := []string{"stream_name=JOBS", "account=$G", "server_id=" + s.ID()}
	w := append(jobs[:len(jobs):len(jobs)], "consumer_name=W")
	idle := append(jobs[:len(jobs):len(jobs)], "consumer_name=IDLE")
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"jetstream_server_jetstream_disabled", nil, 0},
		{"jetstream_server_total_streams", nil, 2},
		{"jetstream_server_total_consumers", nil, 2},
		{"jetstream_server_total_messages", nil, 6},
		{"jetstream_stream_total_messages", jobs, 5},
		{"jetstream_stream_first_seq", jobs, 1},
		{"jetstream_stream_last_seq", jobs, 5},
		{"jetstream_stream_consumer_count", jobs, 2},
		{"jetstream_stream_subject_count", jobs, 5},
		{"jetstream_stream_limit_messages", jobs, -1},
		{"bus_stream_publishes_total", jobs, 5},
		{"bus_stream_duplicates_total", jobs, 1},
		{"bus_stream_publish_errors_total", jobs, 0},
		{"bus_stream_publish_ack_seconds", jobs, 6},
		{"bus_stream_dead_letter_queue", []string{"stream_name=DLQ"}, 1},
		{"jetstream_consumer_num_pending", w, 3},
		{"jetstream_consumer_num_ack_pending", w, 0},
		{"jetstream_consumer_delivered_stream_seq", w, 2},
		{"jetstream_consumer_ack_floor_stream_seq", w, 2},
		{"jetstream_consumer_num_waiting", w, 0},
		{"bus_consumer_dead_lettered_total", w, 1},
		{"bus_consumer_dead_letters_lost_total", w, 0},
		{"jetstream_consumer_num_pending", idle, 0},
		{"bus_consumer_lag_seconds", idle, 0},
		{"bus_jetstream_dead_lettered_total", nil, 1},
		{"bus_jetstream_dead_letters_lost_total", nil, 0},
		{"bus_jetstream_damaged_streams", nil, 0},
	} {
		if got := sc.value(t, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if sc.find("bus_stream_dead_letter_queue", "stream_name=JOBS") != nil {
		t.Error("JOBS is reported as a dead-letter stream")
	}
	// W has messages 3..5 waiting: its lag in seconds is their age.
	if lag := sc.value(t, "bus_consumer_lag_seconds", w...); lag <= 0 || lag > 60 {
		t.Errorf("bus_consumer_lag_seconds{W} = %v, want the age of seq 3", lag)
	}
	for _, name := range []string{"jetstream_consumer_last_delivery_seconds", "jetstream_consumer_last_ack_seconds"} {
		if v := sc.value(t, name, w...); v < 0 || v > 60 {
			t.Errorf("%s{W} = %v", name, v)
		}
		if sc.find(name, idle...) != nil {
			t.Errorf("%s{IDLE} reported before any delivery", name)
		}
	}
	// Every stored message went through a group commit, every commit of
	// a file stream through an fsync.
	commits := sc.find("bus_store_commit_messages").Histogram
	if commits.GetSampleSum() != 6 || commits.GetSampleCount() == 0 {
		t.Errorf("bus_store_commit_messages sum %v count %d, want 6 messages", commits.GetSampleSum(), commits.GetSampleCount())
	}
	if n := sc.value(t, "bus_store_fsync_seconds"); n < float64(commits.GetSampleCount()) {
		t.Errorf("%v fsyncs for %d commits", n, commits.GetSampleCount())
	}
	if v := sc.value(t, "bus_stream_disk_bytes", jobs...); v < sc.value(t, "jetstream_stream_total_bytes", jobs...) {
		t.Errorf("bus_stream_disk_bytes{JOBS} = %v, below its total bytes", v)
	}
	if sc.value(t, "bus_store_free_bytes") <= 0 || sc.value(t, "bus_store_size_bytes") <= 0 {
		t.Error("store file system space not reported")
	}
	if sc.value(t, "bus_connections") < 1 || sc.value(t, "bus_in_messages_total") < 6 || sc.value(t, "gnatsd_varz_in_msgs") < 6 {
		t.Error("server traffic not reported")
	}
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range sc {
		if !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") && !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("%s is not in docs/metrics.md", name)
		}
	}
	if sc.value(t, "bus_info", "version="+server.Version) != 1 || sc["go_goroutines"] == nil || sc["process_cpu_seconds_total"] == nil {
		t.Error("bus_info or the Go and process collectors missing")
	}
}

// Refused credentials and authentication timeouts are counted.
func TestMetricsCountAuthFailures(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{HTTPPort: -1, Authorization: server.Authorization{User: "alice", Password: "pw", Timeout: 200 * time.Millisecond}})
	if nc, err := nats.Connect(busURL(s), nats.UserInfo("alice", "wrong"), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("connected with a wrong password")
	}
	rc := dialRaw(t, s.Addr().String()) // says nothing: times out
	rc.expectClosed()
	eventually(t, 5*time.Second, func() bool {
		return scrapeMetrics(t, s).value(t, "bus_auth_failures_total") == 2
	})
	sc := scrapeMetrics(t, s)
	if sc.value(t, "jetstream_server_jetstream_disabled") != 1 || sc["jetstream_stream_total_messages"] != nil {
		t.Error("a server without JetStream reports JetStream series")
	}
}
