package monitor

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The history sampler starts with the monitor and stops with it:
// Shutdown waits for it (goleak checks that nothing is left).
func TestMonitorStartsAndStopsTheSampler(t *testing.T) {
	t.Parallel()
	src := &fakeSource{counters: Counters{InMsgs: 5}, js: sampleJetStream()}
	m, err := New(Options{Source: src, Host: "127.0.0.1", HTTPPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := m.lag.len(); n != 0 {
		t.Fatalf("New sampled %d times: constructors start nothing", n)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if m.Addr() == nil || m.TLSAddr() != nil {
		t.Errorf("addresses %v, %v", m.Addr(), m.TLSAddr())
	}
	eventually(t, 2*time.Second, func() bool { n, _ := m.lag.len(); return n > 0 })
	if _, series := m.lag.len(); series != 2 {
		t.Errorf("%d consumer series, want 2", series)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err == nil {
		t.Error("started twice")
	}
}

func TestMonitorOptions(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{}); err == nil {
		t.Error("no Source accepted")
	}
	if _, err := New(Options{Source: &fakeSource{}, HTTPSPort: -1}); err == nil {
		t.Error("HTTPS without TLS accepted")
	}
}

// http_auth closes every path but /healthz, and counts requests per
// path for /varz.
func TestMonitorHTTPAuthGuard(t *testing.T) {
	t.Parallel()
	src := &fakeSource{users: map[string]fakeUser{"ann": {password: "pw"}}}
	m := newFakeMonitor(t, src, true)
	if code, _ := call(t, m, "GET", "/healthz", "", "", ""); code != http.StatusOK {
		t.Errorf("/healthz behind http_auth: %d", code)
	}
	r := httpGet(t, m, "/varz", "", "")
	if r.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("/varz without a login: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if r := httpGet(t, m, "/dashboard/api/state", "", ""); r.Header.Get("WWW-Authenticate") != "" {
		t.Error("the dashboard's JSON asks the browser for a login")
	}
	if code, _ := call(t, m, "GET", "/varz", "", "ann", "pw"); code != http.StatusOK {
		t.Errorf("/varz logged in: %d", code)
	}
	call(t, m, "GET", "/subscriptionsz", "", "ann", "pw")
	if reqs := m.Requests(); reqs["/varz"] != 1 || reqs["/healthz"] != 1 || reqs["/subsz"] != 1 {
		t.Errorf("requests %v", reqs)
	}
}

// /metrics reads the counters and the JetStream snapshot from Source.
func TestMonitorMetricsFromSource(t *testing.T) {
	t.Parallel()
	js := sampleJetStream()
	js.Streams[1].AckLatency = Histogram{Bounds: []uint64{1e6}, Counts: []uint64{2}, Count: 3, Sum: 5e6}
	src := &fakeSource{
		counters: Counters{ServerID: "NID", ServerName: "n1", Version: "2.11.0", InMsgs: 10, Leafs: []LeafLink{{Remote: "hub", Up: true}}},
		js:       js,
	}
	m := newFakeMonitor(t, src, false)
	code, b := call(t, m, "GET", "/metrics", "", "", "")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`bus_info{server_id="NID",server_name="n1",version="2.11.0"} 1`,
		`bus_in_messages_total{server_id="NID"} 10`,
		`bus_leafnode_up{remote="hub",server_id="NID"} 1`,
		`jetstream_server_jetstream_disabled{server_id="NID",server_name="n1"} 0`,
		`jetstream_server_total_consumers{server_id="NID",server_name="n1"} 2`,
		`jetstream_stream_total_messages{server_id="NID",account="$G",stream_name="S"} 5`,
		`jetstream_consumer_num_pending{server_id="NID",account="$G",stream_name="S",consumer_name="a"} 4`,
		`bus_stream_publish_ack_seconds_bucket{server_id="NID",account="$G",stream_name="S",le="0.001"} 2`,
		`bus_stream_publish_ack_seconds_count{server_id="NID",account="$G",stream_name="S"} 3`,
	} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	src.js = nil
	if _, b := call(t, m, "GET", "/metrics", "", "", ""); !strings.Contains(string(b), `jetstream_server_jetstream_disabled{server_id="NID",server_name="n1"} 1`) {
		t.Error("JetStream off is not reported")
	}
}

func httpGet(t *testing.T, m *Server, path, user, pass string) *http.Response {
	t.Helper()
	r, err := http.NewRequest("GET", "http://monitor"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		r.SetBasicAuth(user, pass)
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, r)
	return w.Result()
}

// An account's streams carry its name in the account label, and the
// server-wide totals count them beside the global account's.
func TestMonitorMetricsLabelAccounts(t *testing.T) {
	t.Parallel()
	js := sampleJetStream()
	js.Accounts = []AccountJetStreamMetrics{
		{Name: "$G", ReservedMemory: math.MaxUint64, ReservedStorage: math.MaxUint64},
		{Name: "A", Storage: 7, ReservedMemory: 1 << 20, ReservedStorage: math.MaxUint64,
			Streams: []StreamMetrics{{Name: "S", Msgs: 3, Bytes: 7, Consumers: []ConsumerMetrics{{Name: "c", NumPending: 1}}}}},
	}
	m := newFakeMonitor(t, &fakeSource{counters: Counters{ServerID: "NID", ServerName: "n1"}, js: js}, false)
	_, b := call(t, m, "GET", "/metrics", "", "", "")
	for _, want := range []string{
		`jetstream_stream_total_messages{server_id="NID",account="$G",stream_name="S"} 5`,
		`jetstream_stream_total_messages{server_id="NID",account="A",stream_name="S"} 3`,
		`jetstream_consumer_num_pending{server_id="NID",account="A",stream_name="S",consumer_name="c"} 1`,
		fmt.Sprintf(`jetstream_server_total_streams{server_id="NID",server_name="n1"} %d`, len(js.Streams)+1),
		`jetstream_account_max_memory{account="A",account_id="A",account_name="A",server_id="NID",server_name="n1"} 1.048576e+06`,
		`jetstream_account_storage_used{account="A",account_id="A",account_name="A",server_id="NID",server_name="n1"} 7`,
	} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
