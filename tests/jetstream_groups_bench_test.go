package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// BenchmarkJetStreamGroups compares a message-group consumer
// (x_bus_group_by, per-key order) with a plain pull consumer (no order)
// on the workload of issue 13: 20,000 messages over 1,000 keys, 8
// workers fetching in batches of 8 with 1 ms of work per message. It
// reports messages processed a second and the fraction of the time the
// workers spent working (1 is never idle):
//
//	go test ./tests -run '^$' -bench JetStreamGroups -benchtime 3x
func BenchmarkJetStreamGroups(b *testing.B) {
	const msgs, keys, workers, batch, work = 20000, 1000, 8, 8, time.Millisecond
	for _, mode := range []string{"plain", "groups"} {
		b.Run("consumer="+mode, func(b *testing.B) {
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
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			conns := make([]jetstream.JetStream, workers)
			for i := range conns {
				wc, err := nats.Connect(busURL(s))
				if err != nil {
					b.Fatal(err)
				}
				defer wc.Close()
				conns[i], _ = jetstream.New(wc)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var elapsed, busy time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				name := "G" + strconv.Itoa(i)
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}}); err != nil {
					b.Fatal(err)
				}
				for range msgs {
					m := nats.NewMsg(name + ".job")
					m.Header.Set("Order-Id", strconv.Itoa(rng.IntN(keys)))
					if _, err := js.PublishMsgAsync(m); err != nil {
						b.Fatal(err)
					}
				}
				<-js.PublishAsyncComplete()
				cfg := `{"durable_name":"w","ack_policy":"explicit","max_ack_pending":1000}`
				if mode == "groups" {
					cfg = `{"durable_name":"w","ack_policy":"explicit","max_ack_pending":1000,"x_bus_group_by":{"header":"Order-Id"}}`
				}
				body := fmt.Sprintf(`{"stream_name":%q,"config":%s}`, name, cfg)
				if resp, err := nc.Request("$JS.API.CONSUMER.CREATE."+name+".w", []byte(body), 5*time.Second); err != nil || jsonHasKey(resp.Data, "error") {
					b.Fatalf("consumer create: %v", err)
				}
				b.StartTimer()
				start := time.Now()
				var done atomic.Int64
				var worked atomic.Int64
				var wg sync.WaitGroup
				for w := range workers {
					c, err := conns[w].Consumer(ctx, name, "w")
					if err != nil {
						b.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						for done.Load() < msgs {
							fb, err := c.Fetch(batch, jetstream.FetchMaxWait(100*time.Millisecond))
							if err != nil {
								return
							}
							for m := range fb.Messages() {
								t0 := time.Now()
								time.Sleep(work) // the work
								worked.Add(int64(time.Since(t0)))
								_ = m.Ack()
								done.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				elapsed += time.Since(start)
				busy += time.Duration(worked.Load())
				if done.Load() < msgs {
					b.Fatalf("processed %d of %d", done.Load(), msgs)
				}
			}
			b.ReportMetric(float64(msgs*b.N)/elapsed.Seconds(), "msgs/s")
			b.ReportMetric(float64(busy)/float64(workers*elapsed), "busy")
		})
	}
}
