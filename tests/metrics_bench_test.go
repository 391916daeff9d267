package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// BenchmarkMetricsScrape is one scrape of /metrics over HTTP (collect,
// encode, read) with 1,000 streams of 10 consumers each, every consumer
// with a message pending and one unacked: the bound is 100 ms.
// Memory streams keep the set-up short; a file stream adds one series
// (bus_stream_disk_bytes) and no lookups.
func BenchmarkMetricsScrape(b *testing.B) {
	const streams, consumers = 1000, 10
	s, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, HTTPPort: -1, StoreDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { shutdown(b, s) })
	nc, err := nats.Connect(busURL(s))
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
	for i := range streams {
		name := fmt.Sprintf("S%04d", i)
		st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: jetstream.MemoryStorage})
		if err != nil {
			b.Fatal(err)
		}
		for j := range consumers {
			if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: fmt.Sprintf("C%d", j), AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
				b.Fatal(err)
			}
		}
		for k := range 2 {
			if _, err := js.Publish(ctx, fmt.Sprintf("%s.%d", name, k), []byte("x")); err != nil {
				b.Fatal(err)
			}
		}
	}
	url := "http://" + s.HTTPAddr().String() + "/metrics"
	for _, enc := range []string{"identity", "gzip"} {
		b.Run("encoding="+enc, func(b *testing.B) {
			// The client asks for the encoding itself, so that gzip is
			// not undone by the transport inside the timing: what is
			// measured is the server's work and the transfer.
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			defer client.CloseIdleConnections()
			scrape := func() int64 {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Accept-Encoding", enc)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("scrape: %v %s", err, resp.Status)
				}
				return n
			}
			n := scrape()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				scrape()
			}
			b.ReportMetric(float64(n), "bytes/scrape")
		})
	}
}
