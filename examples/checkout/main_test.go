package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
	tl, err := run(ctx, startBus(t), 5, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	checkRun(t, tl, out.String())
}

// The README's steps come first for a new user: its ORDERS and DLQ
// streams are there when the example runs, and it must run anyway.
func TestRunAfterREADME(t *testing.T) {
	t.Parallel()
	url := startBus(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, cfg := range []jetstream.StreamConfig{ // nats stream add … --defaults
		{Name: "ORDERS", Subjects: []string{"orders.>"}},
		{Name: "DLQ", Subjects: []string{"dlq.orders"}},
	} {
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	tl, err := run(ctx, url, 5, &out)
	if err != nil {
		t.Fatalf("after the README's streams: %v\n%s", err, out.String())
	}
	checkRun(t, tl, out.String())
}

// checkRun checks what run did with 5 orders.
func checkRun(t *testing.T, tl *tally, out string) {
	t.Helper()
	for _, consumer := range []string{"charge", "inventory", "analytics"} {
		if n := tl.count(consumer); n != 5 {
			t.Errorf("%s completed %d orders, want 5", consumer, n)
		}
	}
	if n := tl.count("email"); n != 4 {
		t.Errorf("email sent %d receipts, want 4", n)
	}
	for i := 1; i <= 5; i++ {
		if n := tl.attempts[fmt.Sprintf("charge/o-%d", i)]; n != 2 {
			t.Errorf("order o-%d charged in %d attempts, want 2 (one failure, one retry)", i, n)
		}
	}
	if n := tl.attempts["email/o-2"]; n != 1 {
		t.Errorf("poisoned receipt tried %d times, want 1", n)
	}
	want := `dead letter: order o-2 from consumer email after 1 delivery: terminated: invalid e-mail address "not-an-address"`
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}
