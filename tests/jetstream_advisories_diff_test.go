package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// advisoryScenario creates, updates and deletes a stream and a consumer,
// re-creating each once (idempotent: no advisory), and lists the
// lifecycle advisories in order.
func advisoryScenario(t *testing.T, url string) []string {
	t.Helper()
	nc := connect(t, url)
	sub, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	req := func(subject, body string) {
		if _, err := nc.Request(subject, []byte(body), 5*time.Second); err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
	}
	req("$JS.API.STREAM.CREATE.ADV", `{"name":"ADV","subjects":["adv"]}`)
	req("$JS.API.STREAM.CREATE.ADV", `{"name":"ADV","subjects":["adv"]}`)
	req("$JS.API.STREAM.UPDATE.ADV", `{"name":"ADV","subjects":["adv","adv2"]}`)
	req("$JS.API.CONSUMER.CREATE.ADV.C", `{"stream_name":"ADV","config":{"durable_name":"C","ack_policy":"explicit"}}`)
	req("$JS.API.CONSUMER.CREATE.ADV.C", `{"stream_name":"ADV","config":{"durable_name":"C","ack_policy":"explicit"}}`)
	req("$JS.API.CONSUMER.DELETE.ADV.C", "")
	req("$JS.API.STREAM.DELETE.ADV", "")
	var out []string
	for len(out) < 5 {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			out = append(out, "timeout")
			break
		}
		if !isLifecycle(m) {
			continue // API audits and the like, which bus does not send
		}
		var a struct {
			Type, Stream, Consumer, Action string
		}
		if err := json.Unmarshal(m.Data, &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s stream=%s consumer=%s action=%s", m.Subject, a.Type, a.Stream, a.Consumer, a.Action))
	}
	return out
}

func isLifecycle(m *nats.Msg) bool {
	for _, p := range []string{"$JS.EVENT.ADVISORY.STREAM.", "$JS.EVENT.ADVISORY.CONSUMER.CREATED.", "$JS.EVENT.ADVISORY.CONSUMER.DELETED."} {
		if len(m.Subject) > len(p) && m.Subject[:len(p)] == p {
			return true
		}
	}
	return false
}

func TestLifecycleAdvisoriesMatchReference(t *testing.T) {
	t.Parallel()
	ref := advisoryScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := advisoryScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
