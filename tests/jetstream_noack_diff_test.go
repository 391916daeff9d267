package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// noAckScenario: a stream with no_ack stores what is published to it and
// answers none of it, an ack or an error: a request times out (the
// stream's interest means there is no no-responders status either).
func noAckScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 10*time.Second)
	nc := js.Conn()
	var out []string
	_, outcome := createOutcome(ctx, js, jetstream.StreamConfig{Name: "Q", Subjects: []string{"q.>"}, NoAck: true, MaxMsgSize: 8})
	out = append(out, outcome)
	for _, payload := range []string{"stored", "far too large"} {
		_, err := nc.Request("q.x", []byte(payload), 300*time.Millisecond)
		out = append(out, fmt.Sprintf("request %q: timeout %v (%v)", payload, errors.Is(err, nats.ErrTimeout), err))
	}
	s, err := js.Stream(ctx, "Q")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("msgs %d", s.CachedInfo().State.Msgs))
	return out
}

func TestNoAckStreamMatchesReference(t *testing.T) {
	t.Parallel()
	ref := noAckScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := noAckScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
