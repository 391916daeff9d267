package tests

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The latency scenario: A exports svc.> sampled always, hdr.> sampled by
// headers and none.> (no responder) sampled always, each reporting on a
// subject of its own; B imports all three.
const latencyReferenceConfig = `
listen: 127.0.0.1:-1
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    exports [
      { service: "svc.>", latency: { sampling: 100, subject: "lat.svc" } }
      { service: "hdr.>", latency: { sampling: headers, subject: "lat.hdr" } }
      { service: "none.>", latency: "lat.none" }
    ]
  }
  B {
    users: [ {user: b1, password: pw} ]
    imports [
      { service: { account: A, subject: "svc.>" } }
      { service: { account: A, subject: "hdr.>" } }
      { service: { account: A, subject: "none.>" } }
    ]
  }
}
# store: %q
`

func latencyBusOptions() server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	return server.Options{Host: "127.0.0.1", Accounts: []server.Account{
		{Name: "A", Users: []server.User{user("a1")}, Exports: server.Exports{Services: []server.ServiceExport{
			{Subject: "svc.>", Latency: &server.Latency{Sampling: 100, Subject: "lat.svc"}},
			{Subject: "hdr.>", Latency: &server.Latency{Sampling: 0, Subject: "lat.hdr"}},
			{Subject: "none.>", Latency: &server.Latency{Sampling: 100, Subject: "lat.none"}},
		}}},
		{Name: "B", Users: []server.User{user("b1")}, Imports: server.Imports{Services: []server.ServiceImport{
			{Account: "A", Subject: "svc.>"}, {Account: "A", Subject: "hdr.>"}, {Account: "A", Subject: "none.>"},
		}}},
	}}
}

// TestAccountsServiceLatencyMatchesReference compares the
// service_latency metrics of bus and the reference: an answered request
// (200, with the requestor's account and the responder in full), a
// request whose trace header asks for sampling (its header in the
// metric) and one whose header does not (no metric), a request nobody
// answers (503) and one without a reply subject (400). Values that
// differ by nature (ids, times, durations, server names) are compared
// by presence.
func TestAccountsServiceLatencyMatchesReference(t *testing.T) {
	t.Parallel()
	opts := latencyBusOptions()
	opts.StoreDir = t.TempDir()
	bus := startBus(t, opts)
	ref := startReferenceConfig(t, latencyReferenceConfig)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		a := connectAs(t, url, "a1")
		metrics, err := a.SubscribeSync("lat.>")
		if err != nil {
			t.Fatal(err)
		}
		for _, subject := range []string{"svc.>", "hdr.>"} {
			if _, err := a.Subscribe(subject, func(m *nats.Msg) { m.Respond([]byte("answer")) }); err != nil {
				t.Fatal(err)
			}
		}
		a.Flush()
		b := connectAs(t, url, "b1")
		var steps []string
		request := func(what string, msg *nats.Msg) {
			_, err := b.RequestMsg(msg, 2*time.Second)
			steps = append(steps, what+": "+fmt.Sprint(err))
			steps = append(steps, latencyMetrics(t, metrics)...)
		}
		request("svc.q", &nats.Msg{Subject: "svc.q"})
		request("hdr.q without a trace header", &nats.Msg{Subject: "hdr.q", Header: nats.Header{"X-Other": []string{"1"}}})
		request("hdr.q sampled by traceparent", &nats.Msg{Subject: "hdr.q",
			Header: nats.Header{"traceparent": []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "tracestate": []string{"x=1"}}})
		request("hdr.q not sampled by traceparent", &nats.Msg{Subject: "hdr.q",
			Header: nats.Header{"traceparent": []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}}})
		request("hdr.q sampled by X-B3-Sampled", &nats.Msg{Subject: "hdr.q", Header: nats.Header{"X-B3-Sampled": []string{"1"}, "X-B3-TraceId": []string{"80f198ee56343ba864fe8b2a57d3eff7"}}})
		request("none.q", &nats.Msg{Subject: "none.q"})
		if err := b.Publish("svc.noreply", nil); err != nil {
			t.Fatal(err)
		}
		b.Flush()
		steps = append(steps, "svc.noreply published without a reply")
		steps = append(steps, latencyMetrics(t, metrics)...)
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}

// latencyMetrics describes the metrics that arrive until quiet: their
// subject, fixed fields and the shape of the others.
func latencyMetrics(t *testing.T, sub *nats.Subscription) []string {
	t.Helper()
	var out []string
	for {
		m, err := sub.NextMsg(300 * time.Millisecond)
		if err != nil {
			return out
		}
		var doc map[string]any
		if err := json.Unmarshal(m.Data, &doc); err != nil {
			t.Fatalf("%s: %v", m.Subject, err)
		}
		out = append(out, fmt.Sprintf("  %s: type %v status %v description %v header %v keys %s requestor %s responder %s",
			m.Subject, doc["type"], doc["status"], doc["description"], doc["header"], keysOf(doc),
			clientShape(doc["requestor"]), clientShape(doc["responder"])))
	}
}

func keysOf(v any) string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// clientShape shows a ClientInfo's account, user, name, kind and type,
// and which other fields it has.
func clientShape(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "none"
	}
	var others []string
	for k := range m {
		if !slices.Contains([]string{"acc", "user", "name", "kind", "client_type"}, k) {
			others = append(others, k)
		}
	}
	sort.Strings(others)
	return fmt.Sprintf("{acc %v user %v name %v kind %v type %v; %s}", m["acc"], m["user"], m["name"], m["kind"], m["client_type"], strings.Join(others, ","))
}
