package tests

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// BenchmarkLeafLink moves messages through a leaf link, with bus and with
// nats-server as the leaf of the same embedded hub, in one process: core
// messages each way and JetStream publishes from a hub client into the
// leaf's domain. msgs/s is per run; compare the two leaves' numbers of
// one run (docs/scaling.md).
//
//	go test ./tests -run '^$' -bench LeafLink -benchtime 200000x -count 5
func BenchmarkLeafLink(b *testing.B) {
	leaves := []struct {
		name string
		join func(b *testing.B, hub *hubCluster) string
	}{
		{"bus", func(b *testing.B, hub *hubCluster) string {
			return busURL(startBusLeaf(b, hub, server.Options{JetStream: true, JetStreamDomain: "leaf", StoreDir: b.TempDir()},
				server.LeafRemote{URLs: hub.leafURLs()}))
		}},
		{"nats-server", func(b *testing.B, hub *hubCluster) string {
			return startReferenceLeafJS(b, hub, "leaf").ClientURL()
		}},
	}
	for _, leaf := range leaves {
		b.Run("core hub→leaf 128B/"+leaf.name, func(b *testing.B) {
			hub := startHubCluster(b, 1, false, nil)
			leafURL := leaf.join(b, hub)
			benchLinkCore(b, connect(b, hub.clientURL(0)), connect(b, leafURL))
		})
		b.Run("core leaf→hub 128B/"+leaf.name, func(b *testing.B) {
			hub := startHubCluster(b, 1, false, nil)
			leafURL := leaf.join(b, hub)
			benchLinkCore(b, connect(b, leafURL), connect(b, hub.clientURL(0)))
		})
		b.Run("JS async publish hub→leaf 128B/"+leaf.name, func(b *testing.B) {
			hub := startHubCluster(b, 1, false, nil)
			leafURL := leaf.join(b, hub)
			benchLinkJetStream(b, connect(b, hub.clientURL(0)), connect(b, leafURL))
		})
	}
}

// benchLinkCore publishes b.N messages from pub and counts them in on
// sub's side, flushing every 1000 so that neither side drops any.
func benchLinkCore(b *testing.B, pub, subConn *nats.Conn) {
	var got atomic.Int64
	done := make(chan struct{})
	n := int64(b.N)
	sub, err := subConn.Subscribe("bench.link", func(m *nats.Msg) {
		if string(m.Data) == probe {
			return
		}
		if got.Add(1) == n {
			close(done)
		}
	})
	must(b, err)
	must(b, sub.SetPendingLimits(-1, -1))
	must(b, subConn.Flush())
	probeSub, err := subConn.SubscribeSync("bench.link")
	must(b, err)
	awaitRoute(b, pub, probeSub, "bench.link")
	must(b, probeSub.Unsubscribe())
	payload := make([]byte, 128)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		must(b, pub.Publish("bench.link", payload))
		if i%1000 == 999 {
			must(b, pub.Flush())
		}
	}
	must(b, pub.Flush())
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("%d of %d messages crossed", got.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// benchLinkJetStream publishes b.N messages asynchronously from a hub
// client into a stream of the leaf's domain and waits for every ack.
func benchLinkJetStream(b *testing.B, hubConn, leafConn *nats.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	local, err := jetstream.New(leafConn)
	must(b, err)
	_, err = local.CreateStream(ctx, jetstream.StreamConfig{Name: "BENCH", Subjects: []string{"bench.js"}})
	must(b, err)
	js, err := jetstream.NewWithDomain(hubConn, "leaf", jetstream.WithPublishAsyncMaxPending(4096))
	must(b, err)
	eventually(b, 10*time.Second, func() bool {
		_, err := js.Stream(ctx, "BENCH")
		return err == nil
	})
	payload := make([]byte, 128)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := js.PublishAsync("bench.js", payload); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		b.Fatalf("acks: %v", ctx.Err())
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}
