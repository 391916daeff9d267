package tests

import (
	"context"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// encryptionBenchServers are bus and the reference, each plain and with
// each cipher, fsyncing as each does by default.
var encryptionBenchServers = []benchServer{
	{"bus/plain", busWith(server.JetStreamEncryption{})},
	{"bus/chachapoly", busWith(server.JetStreamEncryption{Cipher: "chachapoly", Key: "bench-key"})},
	{"bus/aes", busWith(server.JetStreamEncryption{Cipher: "aes", Key: "bench-key"})},
	{"nats-server/plain", refWith("", 0)},
	{"nats-server/chachapoly", refWith("bench-key", natsserver.ChaCha)},
	{"nats-server/aes", refWith("bench-key", natsserver.AES)},
}

func busWith(enc server.JetStreamEncryption) func(b *testing.B) string {
	return func(b *testing.B) string {
		s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: b.TempDir(), JetStream: true, JetStreamEncryption: enc})
		if err != nil || s.Start() != nil {
			b.Fatal("start bus")
		}
		b.Cleanup(func() { shutdown(b, s) })
		return busURL(s)
	}
}

func refWith(key string, c natsserver.StoreCipher) func(b *testing.B) string {
	return func(b *testing.B) string {
		return "nats://" + refAddr(startReferenceWith(b, func(o *natsserver.Options) {
			o.JetStream, o.StoreDir = true, b.TempDir()
			o.JetStreamKey, o.JetStreamCipher = key, c
		}))
	}
}

// BenchmarkJetStreamEncryption compares publishing (async and sync) and
// fetching 128-byte messages with and without encryption at rest, on bus
// and on the reference. cpu-ns/msg is the process's CPU time (server and
// client, both in it) per message, steadier than the wall time on a
// shared machine:
//
//	go test ./tests -run '^$' -bench JetStreamEncryption -benchtime 20000x
func BenchmarkJetStreamEncryption(b *testing.B) {
	payload := make([]byte, 128)
	for _, srv := range encryptionBenchServers {
		b.Run(srv.name, func(b *testing.B) {
			nc, err := nats.Connect(srv.start(b))
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "E", Subjects: []string{"e"}})
			if err != nil {
				b.Fatal(err)
			}
			b.Run("pub-async", func(b *testing.B) {
				b.SetBytes(int64(len(payload)))
				b.ReportAllocs()
				defer reportCPU(b)()
				for range b.N {
					if _, err := js.PublishAsync("e", payload); err != nil {
						b.Fatal(err)
					}
				}
				<-js.PublishAsyncComplete()
			})
			b.Run("pub-sync", func(b *testing.B) {
				b.SetBytes(int64(len(payload)))
				b.ReportAllocs()
				defer reportCPU(b)()
				for range b.N {
					if _, err := js.Publish(ctx, "e", payload); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("fetch", func(b *testing.B) {
				_ = st.DeleteConsumer(ctx, "F")
				c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "F", AckPolicy: jetstream.AckNonePolicy})
				if err != nil {
					b.Fatal(err)
				}
				info, err := st.Info(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for i := int(info.State.Msgs); i < b.N; i++ { // enough to fetch b.N
					if _, err := js.PublishAsync("e", payload); err != nil {
						b.Fatal(err)
					}
				}
				<-js.PublishAsyncComplete()
				n := b.N
				b.SetBytes(int64(len(payload)))
				b.ReportAllocs()
				b.ResetTimer()
				defer reportCPU(b)()
				for got := 0; got < n; {
					batch, err := c.Fetch(min(500, n-got), jetstream.FetchMaxWait(5*time.Second))
					if err != nil {
						b.Fatal(err)
					}
					for range batch.Messages() {
						got++
					}
					if batch.Error() != nil {
						b.Fatal(batch.Error())
					}
				}
			})
		})
	}
}

// reportCPU starts measuring the process's CPU time; the function it
// returns reports it per b.N as cpu-ns/msg.
func reportCPU(b *testing.B) func() {
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	return func() {
		var after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		b.ReportMetric(float64((rusageCPU(after)-rusageCPU(before)).Nanoseconds())/float64(b.N), "cpu-ns/msg")
	}
}
