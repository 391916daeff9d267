package tests

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestScaleStreamFiles measures the file descriptors of many idle streams
// (issue #30): MEASURE_SCALE_STREAMS streams (default 1,000) of one
// message each, then a restart, a read of every stream and 35 s idle
// (bus closes files idle for 30 s), logging the open files at each step.
// A measurement, not a check:
//
//	MEASURE_SCALE=1 go test -count=1 -v -timeout 30m -run TestScaleStreamFiles ./tests
//
// with MEASURE_BUS_BIN and MEASURE_NATS_SERVER_BIN as for TestScaleStream.
func TestScaleStreamFiles(t *testing.T) {
	if os.Getenv("MEASURE_SCALE") == "" {
		t.Skip("set MEASURE_SCALE=1 to measure")
	}
	n := envInt(t, "MEASURE_SCALE_STREAMS", 1000)
	for _, srv := range scaleServers(t) {
		t.Run(srv.name, func(t *testing.T) {
			dir := t.TempDir()
			p := startScaleServer(t, srv, dir)
			js := p.jetStream(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			for i := range n {
				name := fmt.Sprintf("S%d", i)
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"files." + name}}); err != nil {
					t.Fatal(err)
				}
				if _, err := js.Publish(ctx, "files."+name, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%d streams created: open files %d, RSS %s", n, p.fds(), p.rss(t))
			stopping := time.Now()
			p.stop(t)
			t.Logf("stopped (SIGTERM to exit) in %v", time.Since(stopping).Round(time.Millisecond))
			p = startScaleServer(t, srv, dir)
			js = p.jetStream(t)
			t.Logf("after restart: open files %d, RSS %s", p.fds(), p.rss(t))
			for i := range n {
				s, err := js.Stream(ctx, fmt.Sprintf("S%d", i))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.GetMsg(ctx, 1); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("after reading every stream: open files %d", p.fds())
			time.Sleep(35 * time.Second) // the measurement: files closed while idle
			t.Logf("after 35 s idle: open files %d, RSS %s", p.fds(), p.rss(t))
		})
	}
}
