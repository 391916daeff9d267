package tests

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// benchJS starts an in-process bus with JetStream for a benchmark and
// returns a nats.go JetStream context on it, with a context good for
// timeout; both are closed when b ends.
func benchJS(b *testing.B, timeout time.Duration) (jetstream.JetStream, context.Context) {
	b.Helper()
	s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: b.TempDir(), JetStream: true})
	if err != nil || s.Start() != nil {
		b.Fatal("start bus")
	}
	b.Cleanup(func() { shutdown(b, s) })
	nc, err := nats.Connect(busURL(s))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	b.Cleanup(cancel)
	return js, ctx
}

// fillStream creates a stream with cfg and publishes n messages of
// size bytes to subject, waiting for every ack.
func fillStream(b *testing.B, ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig, subject string, n, size int) jetstream.Stream {
	b.Helper()
	st, err := js.CreateStream(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, size)
	for range n {
		if _, err := js.PublishAsync(subject, payload); err != nil {
			b.Fatal(err)
		}
	}
	<-js.PublishAsyncComplete()
	return st
}
