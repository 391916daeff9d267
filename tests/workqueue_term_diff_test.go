package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A TERM is an ack to retention, as in the reference: a work-queue
// stream drops a message its consumer terminated, and an interest stream
// one every consumer is done with (one acked, the other terminated),
// right away and not at the next restart.
func TestWorkQueueTermRemovesAsReference(t *testing.T) {
	t.Parallel()
	bus, _ := startJS(t)
	ref := startReference(t, true)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		js, err := jetstream.New(connect(t, url))
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t)
		var steps []string
		for _, tc := range []struct {
			name      string
			retention jetstream.RetentionPolicy
			consumers []string
		}{
			{"WQ", jetstream.WorkQueuePolicy, []string{"W"}},
			{"INT", jetstream.InterestPolicy, []string{"A", "B"}},
		} {
			st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: tc.name, Subjects: []string{tc.name + ".>"}, Retention: tc.retention})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range tc.consumers {
				if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3 {
				if _, err := js.Publish(ctx, fmt.Sprintf("%s.%d", tc.name, i), []byte("job")); err != nil {
					t.Fatal(err)
				}
			}
			for i, name := range tc.consumers {
				c, err := st.Consumer(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				b, err := c.Fetch(3, jetstream.FetchMaxWait(2*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				for m := range b.Messages() {
					if i == 0 {
						err = m.Term()
					} else {
						err = m.Ack()
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			var left uint64
			waitFor(5*time.Second, func() bool {
				info, err := st.Info(ctx)
				if err == nil {
					left = info.State.Msgs
				}
				return err == nil && left == 0
			})
			steps = append(steps, fmt.Sprintf("%s: %d messages left", tc.name, left))
		}
		return steps
	})
}
