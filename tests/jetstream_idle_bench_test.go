package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// BenchmarkIdleConsumers measures what an idle server spends on many
// consumers, bus and the embedded nats-server side by side in one run:
// 1,000 streams and 10,000 durable consumers, half pull, half push with a
// listener on the deliver subject, nothing published. Each iteration
// idles for a second; cpu-% is the process's CPU time over that wall
// time, in percent of one core (the benchmark itself sleeps, so it is the
// server's):
//
//	go test ./tests -run '^$' -bench IdleConsumers -benchtime 5x
func BenchmarkIdleConsumers(b *testing.B) {
	const streams, consumers = 1000, 10000
	for _, srv := range jetStreamBenchServers {
		b.Run("server="+srv.name, func(b *testing.B) {
			nc, err := nats.Connect(srv.start(b))
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			createIdleConsumers(b, nc, streams, consumers)
			b.ResetTimer()
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			start := time.Now()
			for range b.N {
				time.Sleep(time.Second) // the idle time being measured
			}
			wall := time.Since(start)
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			b.StopTimer()
			cpu := rusageCPU(after) - rusageCPU(before)
			b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
		})
	}
}

func rusageCPU(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// createIdleConsumers makes the streams and consumers, many requests in
// flight at a time, and subscribes the push consumers' deliver subjects.
func createIdleConsumers(b *testing.B, nc *nats.Conn, streams, consumers int) {
	b.Helper()
	for i := range streams {
		cfg := fmt.Sprintf(`{"name":"S%d","subjects":["s%d.>"]}`, i, i)
		if err := apiRequest(nc, fmt.Sprintf("$JS.API.STREAM.CREATE.S%d", i), cfg); err != nil {
			b.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, consumers)
	sem := make(chan struct{}, 64)
	for i := range consumers {
		stream, name := fmt.Sprintf("S%d", i%streams), fmt.Sprintf("C%d", i)
		cfg := `{"durable_name":"` + name + `","ack_policy":"explicit"}`
		if i%2 == 1 {
			deliver := "deliver." + name
			if _, err := nc.SubscribeSync(deliver); err != nil {
				b.Fatal(err)
			}
			cfg = `{"durable_name":"` + name + `","ack_policy":"explicit","deliver_subject":"` + deliver + `"}`
		}
		body := `{"stream_name":"` + stream + `","config":` + cfg + `}`
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- apiRequest(nc, "$JS.API.CONSUMER.CREATE."+stream+"."+name, body)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
}

// apiRequest sends a JetStream API request and fails on an error reply.
func apiRequest(nc *nats.Conn, subject, body string) error {
	msg, err := nc.Request(subject, []byte(body), 30*time.Second)
	if err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("%s: %w", subject, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("%s: %s", subject, strings.TrimSpace(resp.Error.Description))
	}
	return nil
}
