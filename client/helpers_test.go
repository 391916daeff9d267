package client_test

import (
	"context"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
	"github.com/bus-dev/bus/server"
)

// startBus runs an in-process bus with JetStream on a free loopback port
// and returns its URL; it stops when the test ends.
func startBus(t testing.TB) string {
	t.Helper()
	s, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("new bus: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("start bus: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("bus shutdown: %v", err)
		}
	})
	return "nats://" + s.Addr().String()
}

// startReference runs the reference nats-server with JetStream.
func startReference(t testing.TB) string {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{
		Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir(),
	})
	if err != nil {
		t.Fatalf("reference server: %v", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("reference server not ready")
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns.ClientURL()
}

// onEachServer runs body as parallel subtests against a fresh bus and a
// fresh reference server.
func onEachServer(t *testing.T, body func(t *testing.T, url string)) {
	t.Helper()
	for name, start := range map[string]func(testing.TB) string{"bus": startBus, "nats-server": startReference} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body(t, start(t))
		})
	}
}

// connect opens a client connection closed when the test ends.
func connect(t testing.TB, url string, opts client.Options) *client.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	c, err := client.New(nc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// receive waits for a value on ch.
func receive[T any](t testing.TB, ch <-chan T, timeout time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("nothing received within %v", timeout)
		var zero T
		return zero
	}
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// shutdownWorker stops w when the test ends, failing on a slow stop.
func shutdownWorker[T any](t testing.TB, w *client.Worker[T]) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := w.Shutdown(ctx); err != nil {
			t.Errorf("worker shutdown: %v", err)
		}
	})
}

// order is the payload most tests send.
type order struct {
	ID    string   `json:"id"`
	Total float64  `json:"total"`
	Items []string `json:"items,omitempty"`
}
