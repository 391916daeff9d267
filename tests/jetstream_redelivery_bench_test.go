package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkRedeliveryTiming measures how close to its ack wait (1 s) an
// unacked message is delivered again, bus and the embedded nats-server
// side by side: each iteration fetches 10 messages without acking them,
// then waits for their redeliveries. It reports the median and the
// largest delay from first delivery to redelivery, in milliseconds:
//
//	go test ./tests -run '^$' -bench RedeliveryTiming -benchtime 5x
func BenchmarkRedeliveryTiming(b *testing.B) {
	const msgs, ackWait = 10, time.Second
	for _, srv := range jetStreamBenchServers {
		b.Run("server="+srv.name, func(b *testing.B) {
			nc, err := nats.Connect(srv.start(b))
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R", Subjects: []string{"r"}})
			if err != nil {
				b.Fatal(err)
			}
			for range msgs {
				if _, err := js.Publish(ctx, "r", []byte("x")); err != nil {
					b.Fatal(err)
				}
			}
			var delays []time.Duration
			b.ResetTimer()
			for i := range b.N {
				c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{
					Durable: fmt.Sprintf("C%d", i), AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait,
				})
				if err != nil {
					b.Fatal(err)
				}
				first := map[uint64]time.Time{}
				for {
					batch, err := c.Fetch(msgs, jetstream.FetchMaxWait(3*ackWait))
					if err != nil {
						b.Fatal(err)
					}
					got := 0
					for m := range batch.Messages() {
						got++
						now := time.Now()
						meta, err := m.Metadata()
						if err != nil {
							b.Fatal(err)
						}
						if meta.NumDelivered == 1 {
							first[meta.Sequence.Stream] = now
							continue
						}
						delays = append(delays, now.Sub(first[meta.Sequence.Stream]))
						delete(first, meta.Sequence.Stream)
						_ = m.Ack()
					}
					if got == 0 {
						b.Fatal("no redelivery within three ack waits")
					}
					if len(first) == 0 {
						break
					}
				}
			}
			b.StopTimer()
			slices.Sort(delays)
			b.ReportMetric(float64(delays[len(delays)/2])/1e6, "median-ms")
			b.ReportMetric(float64(delays[len(delays)-1])/1e6, "max-ms")
			b.ReportMetric(float64(delays[0])/1e6, "min-ms")
		})
	}
}
