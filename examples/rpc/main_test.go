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
	if err := run(ctx, startBus(t), &out); err != nil {
		t.Fatal(err)
	}
	want := "[tea cup]: 11.50 EUR\n[pot]: 24.00 EUR\n[tea scone]: error 404: no price for scone\n"
	if out.String() != want {
		t.Fatalf("output\n%s\nwant\n%s", out.String(), want)
	}
}
