package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/client"
)

func TestProduceStoresRetriedPublishOnce(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		c := connect(t, url, client.Options{})
		ctx := testContext(t)
		st, err := c.JetStream().CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := client.NewProducer(c, client.ProducerOptions{Stream: "ORDERS"})
		if err != nil {
			t.Fatal(err)
		}
		first, err := client.Produce(ctx, p, "orders.placed", order{ID: "o-1"}, client.WithID("o-1"))
		if err != nil {
			t.Fatal(err)
		}
		again, err := client.Produce(ctx, p, "orders.placed", order{ID: "o-1"}, client.WithID("o-1"))
		if err != nil {
			t.Fatal(err)
		}
		if first.Duplicate || !again.Duplicate || again.Seq != first.Seq || first.Attempts != 1 || first.Stream != "ORDERS" {
			t.Fatalf("first %+v, again %+v: want the second reported as a duplicate of the first", first, again)
		}
		other, err := client.Produce(ctx, p, "orders.placed", order{ID: "o-2"})
		if err != nil || other.Duplicate || other.ID == "" || other.Seq != first.Seq+1 {
			t.Fatalf("a new event: %+v, %v", other, err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs != 2 {
			t.Fatalf("stream holds %d messages, want 2", info.State.Msgs)
		}
		// A subject no stream captures retries, then gives up with the cause.
		short, cancel := context.WithCancel(ctx)
		defer cancel()
		p2, _ := client.NewProducer(c, client.ProducerOptions{Retry: client.RetryPolicy{MaxAttempts: 2, InitialDelay: 1}})
		_, err = client.Produce(short, p2, "nowhere", order{})
		if !errors.Is(err, jetstream.ErrNoStreamResponse) {
			t.Fatalf("uncaptured subject: %v, want ErrNoStreamResponse", err)
		}
	})
}
