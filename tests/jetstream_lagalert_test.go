package tests

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

type lagAdvisoryMsg struct {
	Type       string  `json:"type"`
	Stream     string  `json:"stream"`
	Consumer   string  `json:"consumer"`
	State      string  `json:"state"`
	NumPending uint64  `json:"num_pending"`
	LagSeconds float64 `json:"lag_seconds"`
}

// TestLagAlertAdvisories: a consumer with x_bus_lag_alert advises when
// its lag crosses the threshold (by count, then by age) and again when
// it is back under.
func TestLagAlertAdvisories(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	nc := connect(t, busURL(s))
	advisories, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.LAG.JOBS.*")
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs.>"}})
	if err != nil {
		t.Fatal(err)
	}
	createConsumerRaw(t, nc, "JOBS", "COUNT", `{"durable_name":"COUNT","ack_policy":"explicit","x_bus_lag_alert":{"messages":3}}`)
	createConsumerRaw(t, nc, "JOBS", "AGE", `{"durable_name":"AGE","ack_policy":"explicit","filter_subject":"jobs.slow","x_bus_lag_alert":{"seconds":1}}`)
	next := func() lagAdvisoryMsg {
		t.Helper()
		m, err := advisories.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("no lag advisory: %v", err)
		}
		var a lagAdvisoryMsg
		if err := json.Unmarshal(m.Data, &a); err != nil {
			t.Fatal(err)
		}
		if a.Type != "io.bus.jetstream.advisory.v1.consumer_lag" || m.Subject != "$JS.EVENT.ADVISORY.CONSUMER.LAG.JOBS."+a.Consumer {
			t.Fatalf("advisory %s %+v", m.Subject, a)
		}
		return a
	}
	for range 3 {
		if _, err := js.Publish(ctx, "jobs.fast", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if a := next(); a.Consumer != "COUNT" || a.State != "lagging" || a.NumPending != 3 {
		t.Fatalf("first advisory %+v, want COUNT lagging with 3", a)
	}
	info, _ := js.Consumer(ctx, "JOBS", "COUNT")
	raw, err := nc.Request("$JS.API.CONSUMER.INFO.JOBS.COUNT", nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ci struct {
		Alerting bool `json:"x_bus_lag_alerting"`
	}
	if err := json.Unmarshal(raw.Data, &ci); err != nil || !ci.Alerting {
		t.Fatalf("consumer info %s: alerting=%v", raw.Data, ci.Alerting)
	}
	b, err := info.Fetch(3, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		_ = m.DoubleAck(ctx)
	}
	if a := next(); a.Consumer != "COUNT" || a.State != "recovered" {
		t.Fatalf("advisory %+v, want COUNT recovered", a)
	}
	// One slow message: not many, but old.
	if _, err := js.Publish(ctx, "jobs.slow", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if a := next(); a.Consumer != "AGE" || a.State != "lagging" || a.LagSeconds < 1 {
		t.Fatalf("advisory %+v, want AGE lagging after 1s", a)
	}
	age, _ := st.Consumer(ctx, "AGE")
	b, err = age.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		_ = m.DoubleAck(ctx)
	}
	if a := next(); a.Consumer != "AGE" || a.State != "recovered" {
		t.Fatalf("advisory %+v, want AGE recovered", a)
	}
	resp, err := nc.Request("$JS.API.CONSUMER.CREATE.JOBS.BAD", []byte(`{"stream_name":"JOBS","config":{"durable_name":"BAD","ack_policy":"explicit","x_bus_lag_alert":{}}}`), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var bad struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &bad); err != nil || bad.Error == nil {
		t.Fatalf("an empty lag alert was accepted: %s", resp.Data)
	}
}
