package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestRedeliveryDelaysSurviveRestart: the pending redelivery deadlines
// (ack wait, and a NAK's delay) are journaled, so a restarted server
// neither redelivers early nor forgets the delay.
func TestRedeliveryDelaysSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	first := startJSAt(t, dir)
	js, _ := jetstream.New(connect(t, busURL(first)))
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R", Subjects: []string{"r.>"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"r.held", "r.naked"} {
		if _, err := js.Publish(ctx, s, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := c.Fetch(2, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var nakAt time.Time
	for m := range b.Messages() {
		if m.Subject() == "r.naked" {
			if err := m.NakWithDelay(2 * time.Second); err != nil {
				t.Fatal(err)
			}
			nakAt = time.Now()
		}
	}
	if nakAt.IsZero() {
		t.Fatal("r.naked not delivered")
	}
	// The NAK must be stored before the restart: ask the consumer.
	eventually(t, 5*time.Second, func() bool {
		i, err := c.Info(ctx)
		return err == nil && i.NumAckPending == 2
	})
	shutdown(t, first)

	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js2, _ := jetstream.New(connect(t, busURL(second)))
	c2, err := js2.Consumer(ctx, "R", "W")
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := c2.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var got []jetstream.Msg
		for m := range b.Messages() {
			got = append(got, m)
		}
		if len(got) == 0 {
			if time.Since(nakAt) > 10*time.Second {
				t.Fatal("the NAKed message was not redelivered after its delay")
			}
			continue
		}
		if len(got) != 1 || got[0].Subject() != "r.naked" {
			t.Fatalf("after the restart got %d messages, first %s; want only r.naked (r.held waits for its 30s ack wait)", len(got), got[0].Subject())
		}
		if early := time.Since(nakAt); early < 1500*time.Millisecond {
			t.Fatalf("r.naked redelivered %v after its NAK with a 2s delay", early)
		}
		md, _ := got[0].Metadata()
		if md.NumDelivered != 2 {
			t.Fatalf("r.naked delivery count %d, want 2", md.NumDelivered)
		}
		return
	}
}
