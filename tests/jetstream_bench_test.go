package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkJetStream measures fsynced async publishing and fetching with
// explicit acks through nats.go against an in-process bus:
//
//	go test ./tests -run '^$' -bench JetStream -benchtime 20000x
func BenchmarkJetStream(b *testing.B) {
	js, ctx := benchJS(b, 5*time.Minute)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b"}})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 128)
	b.Run("pub-async", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := js.PublishAsync("b", payload); err != nil {
				b.Fatal(err)
			}
		}
		<-js.PublishAsyncComplete()
	})
	b.Run("fetch", func(b *testing.B) {
		if err := st.Purge(ctx); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := js.PublishAsync("b", payload); err != nil {
				b.Fatal(err)
			}
		}
		<-js.PublishAsyncComplete()
		_ = st.DeleteConsumer(ctx, "F")
		c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "F", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for got := 0; got < b.N; {
			batch, err := c.Fetch(min(500, b.N-got), jetstream.FetchMaxWait(5*time.Second))
			if err != nil {
				b.Fatal(err)
			}
			for m := range batch.Messages() {
				_ = m.Ack()
				got++
			}
			if batch.Error() != nil {
				b.Fatal(batch.Error())
			}
		}
	})
}
