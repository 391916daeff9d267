package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkWorkQueueDrain measures a work-queue stream drained by a
// fetching worker (batches of 100, plain acks), per message, until the
// stream is empty: the acks' retention deletes are part of it. The fill
// is not measured.
//
//	go test ./tests -run '^$' -bench WorkQueueDrain -benchtime 20000x
func BenchmarkWorkQueueDrain(b *testing.B) {
	js, ctx := benchJS(b, 5*time.Minute)
	st := fillStream(b, ctx, js, jetstream.StreamConfig{Name: "W", Subjects: []string{"w"}, Retention: jetstream.WorkQueuePolicy}, "w", b.N, 128)
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for got := 0; got < b.N; {
		batch, err := c.Fetch(100, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		for m := range batch.Messages() {
			if err := m.Ack(); err != nil {
				b.Fatal(err)
			}
			got++
		}
	}
	for { // until the last acks' deletes are in
		info, err := st.Info(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if info.State.Msgs == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
}
