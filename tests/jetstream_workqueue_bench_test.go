package tests

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// BenchmarkWorkQueueDrain measures a work-queue stream drained by a
// fetching worker (batches of 100, plain acks), per message, until the
// stream is empty: the acks' retention deletes are part of it. The fill
// is not measured.
//
//	go test ./tests -run '^$' -bench WorkQueueDrain -benchtime 20000x
func BenchmarkWorkQueueDrain(b *testing.B) {
	s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: b.TempDir(), JetStream: true})
	if err != nil || s.Start() != nil {
		b.Fatal("start bus")
	}
	b.Cleanup(func() { shutdown(b, s) })
	nc, err := nats.Connect(busURL(s))
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "W", Subjects: []string{"w"}, Retention: jetstream.WorkQueuePolicy})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 128)
	for range b.N {
		if _, err := js.PublishAsync("w", payload); err != nil {
			b.Fatal(err)
		}
	}
	<-js.PublishAsyncComplete()
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
