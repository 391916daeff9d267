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

// pullTurnsScenario: three pulls wait on one consumer (competing
// workers); messages stored then are handed out one per pull in turn,
// and a pull whose batch is done leaves the line.
func pullTurnsScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	req := func(subject, body string) []byte { return mustRequest(t, nc, subject, body) }
	req("$JS.API.STREAM.CREATE.T", `{"name":"T","subjects":["t"]}`)
	req("$JS.API.CONSUMER.CREATE.T.W", `{"stream_name":"T","config":{"durable_name":"W","ack_policy":"explicit"}}`)
	workers := []struct {
		name  string
		batch int
	}{{"a", 3}, {"b", 1}, {"c", 3}}
	type delivery struct{ worker, data string }
	deliveries := make(chan delivery, 16)
	for _, w := range workers {
		inbox := nats.NewInbox()
		name := w.name
		if _, err := nc.Subscribe(inbox, func(m *nats.Msg) {
			if m.Header.Get("Status") == "" {
				deliveries <- delivery{name, string(m.Data)}
			}
		}); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"batch":%d,"expires":5000000000}`, w.batch)
		if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.T.W", inbox, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	var info struct {
		NumWaiting int `json:"num_waiting"`
	}
	if !waitFor(5*time.Second, func() bool { // all three pulls are waiting
		info.NumWaiting = 0
		_ = json.Unmarshal(req("$JS.API.CONSUMER.INFO.T.W", ""), &info)
		return info.NumWaiting == len(workers)
	}) {
		t.Fatalf("%d pulls waiting", info.NumWaiting)
	}
	for i := 1; i <= 6; i++ {
		req("t", fmt.Sprint(i))
	}
	got := map[string][]string{}
	for range 6 {
		select {
		case d := <-deliveries:
			got[d.worker] = append(got[d.worker], d.data)
		case <-time.After(5 * time.Second):
			t.Fatalf("deliveries so far: %v", got)
		}
	}
	var out []string
	for _, w := range workers {
		out = append(out, fmt.Sprintf("%s (batch %d): %s", w.name, w.batch, strings.Join(got[w.name], " ")))
	}
	return out
}

func TestWaitingPullsTakeTurnsAsReference(t *testing.T) {
	t.Parallel()
	ref := pullTurnsScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := pullTurnsScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	for _, l := range ref {
		t.Log(l)
	}
	sameOutcomes(t, ref, got)
}
