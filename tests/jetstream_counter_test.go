package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// counterScenario runs counter streams against url: their config rules,
// increments (big, negative, bad), what a counter stream refuses, and
// the stored totals.
func counterScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 30*time.Second)
	nc := connect(t, url)
	var out []string
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "C", Subjects: []string{"c.>"}, AllowMsgCounter: true, AllowAtomicPublish: true},
		{Name: "PLAIN", Subjects: []string{"plain.>"}},
		{Name: "CNEW", Subjects: []string{"cnew"}, AllowMsgCounter: true, Discard: jetstream.DiscardNew},
		{Name: "CTTL", Subjects: []string{"cttl"}, AllowMsgCounter: true, AllowMsgTTL: true},
		{Name: "CINT", Subjects: []string{"cint"}, AllowMsgCounter: true, Retention: jetstream.InterestPolicy},
		{Name: "CMIR", Mirror: &jetstream.StreamSource{Name: "C"}, AllowMsgCounter: true},
	} {
		_, o := createOutcome(ctx, js, cfg)
		out = append(out, o)
	}
	_, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "C", Subjects: []string{"c.>"}, AllowAtomicPublish: true})
	out = append(out, fmt.Sprintf("turn counter off: %v", err))
	_, err = js.UpdateStream(ctx, jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}, AllowMsgCounter: true})
	out = append(out, fmt.Sprintf("turn counter on: %v", err))

	pub := func(what, subject, data string, kv ...string) {
		out = append(out, what+": "+rawPublish(nc, subject, data, kv...))
	}
	incr := "Nats-Incr"
	pub("plain incr", "plain.a", "", incr, "1")
	pub("plain bad incr", "plain.a", "", incr, "x")
	pub("first", "c.a", "", incr, "1")
	pub("add", "c.a", "", incr, "+41")
	pub("negative", "c.a", "", incr, "-50")
	pub("other subject", "c.b", "", incr, "7")
	big := "1" + strings.Repeat("0", 40)
	pub("big", "c.b", "", incr, big)
	pub("bigger", "c.b", "", incr, big)
	pub("zero", "c.b", "", incr, "0")
	pub("invalid", "c.a", "", incr, "1.5")
	pub("hex", "c.a", "", incr, "0x10")
	pub("payload", "c.a", "data", incr, "1")
	pub("missing", "c.a", "")
	pub("missing with payload", "c.a", "data")
	pub("empty incr", "c.a", "", incr, "")
	pub("with expect", "c.a", "", incr, "1", "Nats-Expected-Last-Sequence", "5")
	pub("with rollup", "c.a", "", incr, "1", "Nats-Rollup", "sub")
	pub("with stream", "c.a", "", incr, "1", "Nats-Expected-Stream", "C")
	pub("ttl", "c.a", "", incr, "1", "Nats-TTL", "5s")
	pub("msg id", "c.c", "", incr, "2", "Nats-Msg-Id", "one")
	pub("msg id again", "c.c", "", incr, "2", "Nats-Msg-Id", "one")
	pub("batch one", "c.d", "", incr, "3", "Nats-Batch-Id", "cb", "Nats-Batch-Sequence", "1")
	pub("batch two", "c.d", "", incr, "4", "Nats-Batch-Id", "cb", "Nats-Batch-Sequence", "2", "Nats-Batch-Commit", "1")
	pub("batch missing one", "c.d", "", "Nats-Batch-Id", "cb2", "Nats-Batch-Sequence", "1", "Nats-Batch-Commit", "1")
	pub("after batch", "c.d", "", incr, "1")

	s, err := js.Stream(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject("c.b")); err != nil {
		t.Fatal(err)
	}
	pub("after purge", "c.b", "", incr, "2")
	out = append(out, "stored: "+storedMsgs(t, js, "C", "Nats-Incr"))
	return out
}

func TestCountersMatchReference(t *testing.T) {
	ref := counterScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := counterScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// TestCounterContinuesAfterRestart: a counter's total is what the
// stream stored, so increments after a restart add to it.
func TestCounterContinuesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: dir})
	js, ctx := scenarioJS(t, busURL(s), 20*time.Second)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "C", Subjects: []string{"c.>"}, AllowMsgCounter: true}); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	for range 3 {
		rawPublish(nc, "c.a", "", "Nats-Incr", "10")
	}
	nc.Close()
	shutdown(t, s)
	s = startBus(t, server.Options{JetStream: true, StoreDir: dir})
	nc = connect(t, busURL(s))
	want := `ack stream=C seq=4 dup=false batch="" count=0 val="25"`
	if got := rawPublish(nc, "c.a", "", "Nats-Incr", "-5"); got != want {
		t.Fatalf("after restart: %s, want %s", got, want)
	}
}
