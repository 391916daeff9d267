package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// pauseScenario pauses a pull consumer through nats.go, checks that it
// delivers nothing while paused and everything once resumed, and that a
// consumer created paused resumes by itself.
func pauseScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 30*time.Second)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "P", Subjects: []string{"p.>"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fetch := func(label string, wait time.Duration) {
		b, err := c.Fetch(10, jetstream.FetchMaxWait(wait))
		if err != nil {
			out = append(out, label+": "+err.Error())
			return
		}
		n := 0
		for m := range b.Messages() {
			_ = m.Ack()
			n++
		}
		out = append(out, fmt.Sprintf("%s: %d messages", label, n))
	}
	resp, err := js.PauseConsumer(ctx, "P", "W", time.Now().Add(time.Hour))
	out = append(out, fmt.Sprintf("pause: paused=%v remaining>0=%v err=%v", resp != nil && resp.Paused, resp != nil && resp.PauseRemaining > 0, err))
	info, _ := c.Info(ctx)
	out = append(out, fmt.Sprintf("info: paused=%v has_until=%v", info.Paused, info.Config.PauseUntil != nil))
	for i := range 3 {
		if _, err := js.Publish(ctx, fmt.Sprintf("p.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	fetch("while paused", 300*time.Millisecond)
	r, err := js.ResumeConsumer(ctx, "P", "W")
	out = append(out, fmt.Sprintf("resume: paused=%v err=%v", r != nil && r.Paused, err))
	fetch("after resume", 2*time.Second)
	info, _ = c.Info(ctx)
	out = append(out, fmt.Sprintf("info: paused=%v pending=%d", info.Paused, info.NumPending))
	_, err = js.PauseConsumer(ctx, "P", "NOPE", time.Now().Add(time.Hour))
	out = append(out, fmt.Sprintf("pause missing: %v", err))

	until := time.Now().Add(time.Second)
	c2, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "LATER", AckPolicy: jetstream.AckExplicitPolicy, PauseUntil: &until})
	if err != nil {
		t.Fatal(err)
	}
	info, _ = c2.Info(ctx)
	out = append(out, fmt.Sprintf("created paused: %v", info.Paused))
	b, err := c2.Fetch(3, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range b.Messages() {
		n++
	}
	out = append(out, fmt.Sprintf("resumed by itself: %d messages, not before the pause ended: %v", n, !time.Now().Before(until)))
	return out
}

func TestConsumerPauseMatchesReference(t *testing.T) {
	t.Parallel()
	ref := pauseScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := pauseScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// TestConsumerPauseSurvivesRestart: a pause set through the API is
// stored with the consumer, so a restarted server keeps it.
func TestConsumerPauseSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	first := startJSAt(t, dir)
	nc := connect(t, busURL(first))
	js, _ := jetstream.New(nc)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "P", Subjects: []string{"p.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := js.PauseConsumer(ctx, "P", "W", until); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "p.1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	shutdown(t, first)

	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js2, _ := jetstream.New(connect(t, busURL(second)))
	c, err := js2.Consumer(ctx, "P", "W")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx)
	if err != nil || !info.Paused || info.Config.PauseUntil == nil || !info.Config.PauseUntil.Equal(until) {
		t.Fatalf("after restart: paused=%v until=%v err=%v, want paused until %v", info.Paused, info.Config.PauseUntil, err, until)
	}
	b, err := c.Fetch(1, jetstream.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for range b.Messages() {
		t.Fatal("a paused consumer delivered after a restart")
	}
}
