package server

import (
	"net/http"
	"strings"
	"testing"
)

// The header sampling rules, the reference's: each trace format's
// sampled flag decides, and the headers that decided are kept.
func TestLatencyHeaderSampling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		header  http.Header
		sampled bool
		kept    int
	}{
		{"none", http.Header{"X-Other": {"1"}}, false, 0},
		{"uber sampled", http.Header{"Uber-Trace-Id": {"479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:1"}, "Uberctx-A": {"x"}}, true, 2},
		{"uber not sampled", http.Header{"Uber-Trace-Id": {"479fefe9525eddb:5adb976bfc1f95c1:479fefe9525eddb:0"}}, false, 0},
		{"uber malformed", http.Header{"Uber-Trace-Id": {"479fefe9525eddb"}}, false, 0},
		{"b3 sampled", http.Header{"X-B3-Sampled": {"1"}, "X-B3-Traceid": {"80f1"}, "X-B3-Spanid": {"e457"}}, true, 3},
		{"b3 denied", http.Header{"X-B3-Sampled": {"0"}, "X-B3-Traceid": {"80f1"}}, false, 0},
		{"b3 trace id alone", http.Header{"X-B3-Traceid": {"80f1"}}, true, 1},
		{"b3 single sampled", http.Header{"B3": {"80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90"}}, true, 1},
		{"b3 single denied", http.Header{"B3": {"80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-0"}}, false, 0},
		{"b3 single zero", http.Header{"B3": {"0"}}, false, 0},
		{"traceparent sampled", http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "Tracestate": {"x=1"}}, true, 2},
		{"traceparent not sampled", http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}}, false, 0},
		{"traceparent bad flags", http.Header{"Traceparent": {"00-4bf9-00f0-zz"}}, false, 0},
	} {
		sampled, kept := traceSampled(tc.header)
		if sampled != tc.sampled || len(kept) != tc.kept {
			t.Errorf("%s: sampled %v keeping %v, want %v keeping %d", tc.name, sampled, kept, tc.sampled, tc.kept)
		}
	}
}

// A header block parses with canonical names, as the sampling rules
// look them up.
func TestLatencyParseHeaders(t *testing.T) {
	t.Parallel()
	h := parseHeaders([]byte("NATS/1.0\r\ntraceparent: 00-a-b-01\r\nx-b3-sampled:1\r\n\r\n"))
	if h.Get("Traceparent") != "00-a-b-01" || h["X-B3-Sampled"][0] != "1" {
		t.Fatalf("parsed %v", h)
	}
	if parseHeaders([]byte("HTTP/1.1\r\n\r\n")) != nil {
		t.Fatal("a block that is not NATS/1.0 parsed")
	}
}

// The reference's refusals of a latency key.
func TestLatencyValidation(t *testing.T) {
	t.Parallel()
	acc := func(e ServiceExport) Account {
		return Account{Name: "A", Exports: Exports{Services: []ServiceExport{e}}}
	}
	for _, tc := range []struct {
		name string
		e    ServiceExport
		want string
	}{
		{"sampling", ServiceExport{Subject: "s", Latency: &Latency{Sampling: 101, Subject: "l"}}, errBadSampling},
		{"subject", ServiceExport{Subject: "s", Latency: &Latency{Sampling: 50, Subject: "l.*"}}, "not a valid publish subject"},
		{"stream responses", ServiceExport{Subject: "s", ResponseType: "stream", Latency: &Latency{Sampling: 50, Subject: "l"}}, errBadServiceType},
		{"its own service", ServiceExport{Subject: "s.>", Latency: &Latency{Sampling: 50, Subject: "s.l"}}, "is a service export of the account"},
	} {
		err := validateLatency(acc(tc.e), tc.e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	ok := ServiceExport{Subject: "s", Latency: &Latency{Sampling: 0, Subject: "l"}}
	if err := validateLatency(acc(ok), ok); err != nil {
		t.Errorf("headers sampling: %v", err)
	}
}
