package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// durableSourcingScenario: durable consumer sourcing (ADR-60, API level
// 4), a mirror or source copying through a push consumer with ack
// policy flow_control made beforehand on the origin (issue 28). The
// config checks (10213, 10215, 10216); a mirror of a work-queue origin
// through its consumer C gets every message, and the origin drops what
// was copied (the flow-control answers ack it); a source through a
// consumer of a limits origin stamps Nats-Stream-Source with the
// consumer's hash in the origin's name; a consumer that does not ack by
// flow control is refused in the source's error (10217).
func durableSourcingScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	var out []string
	api := func(subject, body string) map[string]any {
		t.Helper()
		msg, err := nc.Request(subject, []byte(body), 5*time.Second)
		must(t, err)
		var v map[string]any
		must(t, json.Unmarshal(msg.Data, &v))
		return v
	}
	outcome := func(step string, v map[string]any) {
		if e, ok := v["error"].(map[string]any); ok {
			out = append(out, fmt.Sprintf("%s: %v %v", step, e["err_code"], e["description"]))
			return
		}
		out = append(out, step+": ok")
	}
	stream := func(name, cfg string) {
		outcome("create "+name, api("$JS.API.STREAM.CREATE."+name, cfg))
	}
	publish := func(subjects ...string) {
		for _, s := range subjects {
			_, err := nc.Request(s, []byte(s), 5*time.Second)
			must(t, err)
		}
	}
	info := func(name string) map[string]any { return api("$JS.API.STREAM.INFO."+name, "") }
	msgs := func(name string) float64 {
		st, _ := info(name)["state"].(map[string]any)
		n, _ := st["messages"].(float64)
		return n
	}
	waitMsgs := func(name string, n float64) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for msgs(name) != n && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		out = append(out, fmt.Sprintf("%s holds %v", name, msgs(name)))
	}

	stream("O", `{"name":"O","subjects":["o.>"],"retention":"workqueue"}`)
	outcome("consumer C", api("$JS.API.CONSUMER.CREATE.O.C",
		`{"stream_name":"O","config":{"durable_name":"C","deliver_subject":"d.c","ack_policy":"flow_control","max_ack_pending":100}}`))
	stream("BAD1", `{"name":"BAD1","mirror":{"name":"O","filter_subject":"o.1","consumer":{"name":"C","deliver_subject":"d.c"}}}`)
	stream("BAD2", `{"name":"BAD2","mirror":{"name":"O","consumer":{"name":"C","deliver_subject":"d.*"}}}`)
	stream("BAD3", `{"name":"BAD3","sources":[{"name":"O","opt_start_seq":2,"consumer":{"name":"C","deliver_subject":"d.c"}}]}`)
	stream("BAD4", `{"name":"BAD4","sources":[{"name":"O","consumer":{"name":"C","deliver_subject":"d.c"}},{"name":"O","filter_subject":"o.2","consumer":{"name":"C","deliver_subject":"d.c2"}}]}`)
	stream("BAD5", `{"name":"BAD5","sources":[{"name":"O","consumer":{"name":"C","deliver_subject":"d.c"}},{"name":"O","subject_transforms":[{"src":"o.>","dest":"x.>"}],"consumer":{"name":"C","deliver_subject":"d.c"}}]}`)
	publish("o.1", "o.2", "o.3")
	stream("M", `{"name":"M","mirror":{"name":"O","consumer":{"name":"C","deliver_subject":"d.c"}}}`)
	waitMsgs("M", 3)
	waitMsgs("O", 0)
	publish("o.4", "o.5")
	waitMsgs("M", 5)
	waitMsgs("O", 0)
	for seq := 1; seq <= 5; seq++ {
		m := api("$JS.API.STREAM.MSG.GET.M", fmt.Sprintf(`{"seq":%d}`, seq))
		msg, _ := m["message"].(map[string]any)
		out = append(out, fmt.Sprintf("M %d: %v", seq, msg["subject"]))
	}
	ci := api("$JS.API.CONSUMER.INFO.O.C", "")
	floor, _ := ci["ack_floor"].(map[string]any)
	out = append(out, fmt.Sprintf("C: ack_floor %v num_ack_pending %v num_pending %v", floor["stream_seq"], ci["num_ack_pending"], ci["num_pending"]))

	stream("L", `{"name":"L","subjects":["l.>"]}`)
	outcome("consumer D", api("$JS.API.CONSUMER.CREATE.L.D",
		`{"stream_name":"L","config":{"durable_name":"D","deliver_subject":"d.d","ack_policy":"flow_control","max_ack_pending":10}}`))
	outcome("consumer E", api("$JS.API.CONSUMER.CREATE.L.E",
		`{"stream_name":"L","config":{"durable_name":"E","deliver_subject":"d.e","ack_policy":"explicit"}}`))
	publish("l.1", "l.2")
	stream("S", `{"name":"S","sources":[{"name":"L","consumer":{"name":"D","deliver_subject":"d.d"}}]}`)
	waitMsgs("S", 2)
	js, err := nc.JetStream()
	must(t, err)
	raw, err := js.GetMsg("S", 1)
	must(t, err)
	fields := strings.Fields(raw.Header.Get("Nats-Stream-Source"))
	out = append(out, fmt.Sprintf("S 1: %s, from %v", raw.Subject, fields[:min(2, len(fields))]))
	// The consumer is the user's: a source removed leaves it.
	outcome("update S without sources", api("$JS.API.STREAM.UPDATE.S", `{"name":"S"}`))
	outcome("consumer D after", api("$JS.API.CONSUMER.INFO.L.D", ""))
	stream("N", `{"name":"N","sources":[{"name":"L","consumer":{"name":"E","deliver_subject":"d.e"}}]}`)
	deadline := time.Now().Add(15 * time.Second)
	for {
		srcs, _ := info("N")["sources"].([]any)
		var e map[string]any
		if len(srcs) == 1 {
			e, _ = srcs[0].(map[string]any)["error"].(map[string]any)
		}
		if e != nil || time.Now().After(deadline) {
			out = append(out, fmt.Sprintf("N source error: %v", e))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return out
}

func TestDurableConsumerSourcingMatchesReference(t *testing.T) {
	t.Parallel()
	ref := durableSourcingScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := durableSourcingScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// durableMirrorRestartScenario: a mirror through a durable consumer
// goes on after a restart of the server from where the consumer's ack
// floor stands, neither repeating nor skipping a message.
func durableMirrorRestartScenario(t *testing.T, url string, restart func()) []string {
	nc := connect(t, url, nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1))
	var out []string
	request := func(subject, body string) map[string]any {
		t.Helper()
		for range 250 { // until the client has reconnected
			msg, err := nc.Request(subject, []byte(body), 2*time.Second)
			var v map[string]any
			if err == nil && json.Unmarshal(msg.Data, &v) == nil {
				return v
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no answer on %s", subject)
		return nil
	}
	msgs := func(name string) float64 {
		st, _ := request("$JS.API.STREAM.INFO."+name, "")["state"].(map[string]any)
		n, _ := st["messages"].(float64)
		return n
	}
	waitMsgs := func(name string, n float64) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for msgs(name) != n && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		out = append(out, fmt.Sprintf("%s holds %v", name, msgs(name)))
	}
	request("$JS.API.STREAM.CREATE.O", `{"name":"O","subjects":["o.>"],"retention":"workqueue"}`)
	request("$JS.API.CONSUMER.CREATE.O.C",
		`{"stream_name":"O","config":{"durable_name":"C","deliver_subject":"d.c","ack_policy":"flow_control","max_ack_pending":100}}`)
	request("$JS.API.STREAM.CREATE.M", `{"name":"M","mirror":{"name":"O","consumer":{"name":"C","deliver_subject":"d.c"}}}`)
	for _, s := range []string{"o.1", "o.2", "o.3"} {
		request(s, s)
	}
	waitMsgs("M", 3)
	waitMsgs("O", 0)
	restart()
	for _, s := range []string{"o.4", "o.5"} {
		request(s, s)
	}
	waitMsgs("M", 5)
	waitMsgs("O", 0)
	for seq := 1; seq <= 5; seq++ {
		msg, _ := request("$JS.API.STREAM.MSG.GET.M", fmt.Sprintf(`{"seq":%d}`, seq))["message"].(map[string]any)
		out = append(out, fmt.Sprintf("M %d: %v", seq, msg["subject"]))
	}
	return out
}

func TestDurableMirrorSurvivesRestartMatchesReference(t *testing.T) {
	t.Parallel()
	sameAcrossRestart(t, durableMirrorRestartScenario)
}
