package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A work queue's acked messages are gone, also after a restart (the
// acks' deletes are not waited for; TestSweepRetainedDeletesWhatWasAcked
// shows the restart finishing ones that did not land), and a deliver-new
// consumer is refused on a work queue as by the reference (10101).
func TestWorkQueueAcksLeaveNothingAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	first := startJSAt(t, dir)
	js := jsClient(t, first)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WQ", Subjects: []string{"wq"}, Retention: jetstream.WorkQueuePolicy})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := js.Publish(ctx, "wq", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "N", AckPolicy: jetstream.AckExplicitPolicy, DeliverPolicy: jetstream.DeliverNewPolicy}); apiCode(err) != 10101 {
		t.Fatalf("deliver-new consumer on a work queue: %v, want 10101", err)
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(30, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range b.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 30 {
		t.Fatalf("fetched %d", n)
	}
	shutdown(t, first)

	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js2 := jsClient(t, second)
	st2, err := js2.Stream(ctx, "WQ")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool {
		info, err := st2.Info(ctx)
		return err == nil && info.State.Msgs == 20 && info.State.FirstSeq == 31
	})
}
