package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// limitsReferenceConfig is the reference configured as limitsBusOptions.
const limitsReferenceConfig = `listen: "127.0.0.1:-1"
jetstream {
  store_dir: %q
  limits {
    max_ack_pending: 50
    max_request_batch: 20
    duplicate_window: "1m"
    default_max_consumers: 3
    max_ha_assets: 2
    batch { max_msgs: 7, timeout: "5s" }
  }
}
`

func limitsBusOptions() server.Options {
	return server.Options{
		JetStream: true,
		JetStreamLimits: server.JetStreamLimits{
			MaxAckPending: 50, MaxRequestBatch: 20, DuplicateWindow: time.Minute,
			DefaultMaxConsumers: 3, MaxHAAssets: 2,
		},
		JetStreamBatchLimits: server.JetStreamBatchLimits{MaxSize: 7, Timeout: 5 * time.Second},
	}
}

// TestJetStreamLimitsMatchReference: the jetstream { limits {} } block's
// bounds on what clients set, against the reference configured alike:
// consumers over max_ack_pending or max_request_batch are refused and
// those without get them as defaults, a pull over the batch limit gets
// 409, a stream's duplicate window is capped and bounded, streams without
// max_consumers are held to default_max_consumers, and account info and
// /jsz report what the reference reports.
func TestJetStreamLimitsMatchReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, limitsBusOptions())
	ref := startReferenceConfig(t, limitsReferenceConfig)
	refJsz, err := ref.Jsz(nil)
	if err != nil {
		t.Fatal(err)
	}
	busJsz := bus.Jsz(server.JszOptions{})
	if got, want := compactJSON(t, busJsz.Limits), compactJSON(t, refJsz.Limits); got != want {
		t.Errorf("/jsz limits\n bus: %s\n ref: %s", got, want)
	}
	sameOutcomes(t, limitsScenario(t, ref.ClientURL()), limitsScenario(t, busURL(bus)))
}

// limitsScenario runs the API requests and describes each answer by the
// fields the limits decide.
func limitsScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	var out []string
	api := func(subject, body string, fields ...string) {
		t.Helper()
		out = append(out, subject+" "+body+" → "+limitsAnswer(t, nc, subject, body, fields...))
	}
	api("$JS.API.INFO", "", "limits", "reserved_memory", "reserved_storage")
	dup := []string{"config.duplicate_window"}
	api("$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"]}`, dup...)
	api("$JS.API.STREAM.CREATE.T", `{"name":"T","subjects":["t.>"],"duplicate_window":120000000000}`, dup...)
	api("$JS.API.STREAM.CREATE.U", `{"name":"U","subjects":["u.>"],"max_age":30000000000}`, dup...)
	api("$JS.API.STREAM.CREATE.V", `{"name":"V","subjects":["v.>"],"duplicate_window":60000000000,"max_bytes":1048576,"max_consumers":10}`, dup...)
	api("$JS.API.STREAM.UPDATE.S", `{"name":"S","subjects":["s.>"],"duplicate_window":90000000000}`, dup...)
	api("$JS.API.STREAM.UPDATE.S", `{"name":"S","subjects":["s.>"],"duplicate_window":30000000000}`, dup...)
	api("$JS.API.INFO", "", "reserved_memory", "reserved_storage")

	cons := []string{"config.max_ack_pending", "config.max_batch"}
	for _, c := range []struct{ name, cfg string }{
		{"a", `"ack_policy":"explicit"`},
		{"b", `"ack_policy":"explicit","max_ack_pending":60`},
		{"b", `"ack_policy":"explicit","max_ack_pending":50`},
		{"c", `"ack_policy":"explicit","max_batch":30`},
		{"c", `"ack_policy":"explicit","max_batch":-4`},
		{"d", `"ack_policy":"explicit","deliver_subject":"push.d"`},
		{"e", `"ack_policy":"none"`},
		{"f", `"ack_policy":"explicit","max_ack_pending":-1`},
	} {
		body := fmt.Sprintf(`{"stream_name":"V","config":{"durable_name":%q,%s}}`, c.name, c.cfg)
		api("$JS.API.CONSUMER.CREATE.V."+c.name, body, cons...)
	}
	// S sets no max_consumers, so holds default_max_consumers (3); W
	// sets its own 5.
	api("$JS.API.STREAM.CREATE.W", `{"name":"W","subjects":["w.>"],"max_consumers":5}`, "config.max_consumers")
	for i := range 4 {
		for _, s := range []string{"S", "W"} {
			body := fmt.Sprintf(`{"stream_name":%q,"config":{"durable_name":"n%d","ack_policy":"explicit","max_ack_pending":10}}`, s, i)
			api(fmt.Sprintf("$JS.API.CONSUMER.CREATE.%s.n%d", s, i), body, cons...)
		}
	}
	for _, pull := range []string{`{"batch":21,"no_wait":true}`, `{"batch":20,"no_wait":true}`} {
		out = append(out, "pull "+pull+" → "+limitsPull(t, nc, "$JS.API.CONSUMER.MSG.NEXT.S.n0", pull))
	}
	return out
}

// limitsAnswer requests subject and describes the answer: its error, or
// the named fields (dotted paths) as JSON.
func limitsAnswer(t *testing.T, nc *nats.Conn, subject, body string, fields ...string) string {
	t.Helper()
	msg, err := nc.Request(subject, []byte(body), 5*time.Second)
	if err != nil {
		return "request: " + err.Error()
	}
	var resp map[string]any
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return "bad JSON: " + string(msg.Data)
	}
	if e, ok := resp["error"].(map[string]any); ok {
		return fmt.Sprintf("error %v %v", e["err_code"], e["description"])
	}
	s := "ok"
	for _, f := range fields {
		s += " " + f + "=" + compactJSON(t, field(resp, f))
	}
	return s
}

// limitsPull sends one pull request and returns the status it gets.
func limitsPull(t *testing.T, nc *nats.Conn, subject, body string) string {
	t.Helper()
	msg, err := nc.Request(subject, []byte(body), 5*time.Second)
	if err != nil {
		return "request: " + err.Error()
	}
	return msg.Header.Get("Status") + " " + msg.Header.Get("Description")
}

func compactJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
