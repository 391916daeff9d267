package client_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
)

// The typed layer's cost over raw nats.go, over a loopback bus. "raw"
// publishes bytes the caller already has; "typed" encodes a struct and
// writes the envelope headers. Run with:
//
//	go test ./client -run '^$' -bench . -benchmem
func BenchmarkPublish(b *testing.B) {
	url := startBus(b)
	c := connect(b, url, client.Options{})
	o := order{ID: "o-1", Total: 42.5, Items: []string{"tea", "cup"}}
	raw, _ := client.MsgPack{}.Marshal(o)
	ctx := context.Background()
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := c.NATS().Publish("bench.raw", raw); err != nil {
				b.Fatal(err)
			}
		}
		_ = c.NATS().Flush()
	})
	for _, codec := range []client.Codec{client.MsgPack{}, client.JSON{}} {
		b.Run("typed/"+codec.ContentType(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := client.Publish(ctx, c, "bench.typed", o, client.WithCodec(codec)); err != nil {
					b.Fatal(err)
				}
			}
			_ = c.NATS().Flush()
		})
	}
}

// BenchmarkConsume delivers b.N enveloped messages to a subscriber; "raw"
// takes the *nats.Msg as it is, "typed" decodes it into an Event.
func BenchmarkConsume(b *testing.B) {
	url := startBus(b)
	pubConn := connect(b, url, client.Options{})
	c := connect(b, url, client.Options{})
	o := order{ID: "o-1", Total: 42.5, Items: []string{"tea", "cup"}}
	run := func(b *testing.B, subject string, subscribe func(count *atomic.Int64, done chan struct{}, n int64) (*nats.Subscription, error)) {
		var count atomic.Int64
		done := make(chan struct{})
		sub, err := subscribe(&count, done, int64(b.N))
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
		_ = sub.SetPendingLimits(-1, -1)
		_ = c.NATS().Flush()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := client.Publish(context.Background(), pubConn, subject, o); err != nil {
				b.Fatal(err)
			}
		}
		_ = pubConn.NATS().Flush()
		<-done
	}
	b.Run("raw", func(b *testing.B) {
		run(b, "bench.consume.raw", func(count *atomic.Int64, done chan struct{}, n int64) (*nats.Subscription, error) {
			return c.NATS().Subscribe("bench.consume.raw", func(m *nats.Msg) {
				if count.Add(1) == n {
					close(done)
				}
			})
		})
	})
	b.Run("typed", func(b *testing.B) {
		run(b, "bench.consume.typed", func(count *atomic.Int64, done chan struct{}, n int64) (*nats.Subscription, error) {
			return client.Subscribe(c, "bench.consume.typed", func(ctx context.Context, ev client.Event[order]) {
				if count.Add(1) == n {
					close(done)
				}
			})
		})
	})
}
