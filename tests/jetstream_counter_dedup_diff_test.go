package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// counterDedupScenario: on a counter stream a publish whose msg id is in
// the duplicate window is acked as the duplicate it is, increment or not;
// one without an increment and with a new id is refused (10169). Issue
// 28, item 8.
func counterDedupScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 10*time.Second)
	nc := connect(t, url)
	_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "C", Subjects: []string{"c.>"}, AllowMsgCounter: true})
	out := []string{o}
	pub := func(what, subject, data string, kv ...string) {
		out = append(out, what+": "+rawPublish(nc, subject, data, kv...))
	}
	incr, id := "Nats-Incr", "Nats-Msg-Id"
	pub("increment with id", "c.a", "", incr, "2", id, "one")
	pub("no increment, same id", "c.a", "", id, "one")
	pub("no increment, same id, payload", "c.a", "data", id, "one")
	pub("no increment, same id, other subject", "c.b", "", id, "one")
	pub("bad increment, same id", "c.a", "", incr, "x", id, "one")
	pub("increment with payload, same id", "c.a", "data", incr, "1", id, "one")
	pub("no increment, new id", "c.a", "", id, "two")
	pub("increment, new id", "c.a", "", incr, "1", id, "two")
	pub("no increment, that id", "c.a", "", id, "two")
	out = append(out, "stored: "+storedMsgs(t, js, "C", "Nats-Incr"))
	return out
}

func TestCounterDuplicateMsgIDMatchesReference(t *testing.T) {
	t.Parallel()
	ref := counterDedupScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := counterDedupScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
