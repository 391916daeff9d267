package tests

import (
	"flag"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

var consumeProfile = flag.String("consume.cpuprofile", "", "write a CPU profile of BenchmarkJetStreamConsume's reading phase only (not the fill) here")

// BenchmarkJetStreamConsume measures reading a filled stream the three
// ways `nats bench js` does (fetch in batches of 500 with explicit acks,
// Consume with explicit acks, an ordered consumer), per message, in one
// process with bus. The fill is not measured, and -consume.cpuprofile
// profiles the reading alone, which the server's CPU per message on the
// side-by-side suite's JS fetch, consume and ordered rows comes from:
//
//	go test ./tests -run '^$' -bench JetStreamConsume -benchtime 200000x -consume.cpuprofile /tmp/c.prof
func BenchmarkJetStreamConsume(b *testing.B) {
	for _, kind := range []string{"fetch", "consume", "ordered"} {
		b.Run("kind="+kind, func(b *testing.B) {
			js, ctx := benchJS(b, 5*time.Minute)
			st := fillStream(b, ctx, js, jetstream.StreamConfig{Name: "B", Subjects: []string{"b"}}, "b", b.N, 128)
			var c jetstream.Consumer
			var err error
			if kind == "ordered" {
				c, err = st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
			} else {
				c, err = st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "F", AckPolicy: jetstream.AckExplicitPolicy})
			}
			if err != nil {
				b.Fatal(err)
			}
			stop := startConsumeProfile(b)
			defer stop()
			b.ReportAllocs()
			b.ResetTimer()
			switch kind {
			case "fetch":
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
			default:
				done := make(chan struct{})
				got := 0
				cc, err := c.Consume(func(m jetstream.Msg) {
					if kind != "ordered" {
						_ = m.Ack()
					}
					if got++; got == b.N {
						close(done)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
				select {
				case <-done:
				case <-ctx.Done():
					b.Fatal("timed out")
				}
				cc.Stop()
			}
			b.StopTimer()
		})
	}
}

// startConsumeProfile starts the CPU profile -consume.cpuprofile asks
// for; the returned func stops it.
func startConsumeProfile(b *testing.B) func() {
	b.Helper()
	if *consumeProfile == "" {
		return func() {}
	}
	f, err := os.Create(*consumeProfile)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}
