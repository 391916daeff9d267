package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/bus-dev/bus/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startBus(t *testing.T) string {
	t.Helper()
	s, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return "nats://" + s.Addr().String()
}

func TestRun(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A drain well below what 8 publishers manage even on a loaded machine,
	// so that the burst always outruns it.
	cfg := Config{Orders: 600, Rate: 300, Workers: 8, Producers: 8, PrintEvery: 50 * time.Millisecond}
	depths, err := run(ctx, startBus(t), cfg, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	peak := uint64(0)
	for _, d := range depths {
		peak = max(peak, d)
	}
	// The burst outruns the drain, so the queue fills, then empties.
	if peak < 100 || depths[len(depths)-1] != 0 {
		t.Fatalf("depths %v: want a peak of at least 100 that falls to 0\n%s", depths, out.String())
	}
}
