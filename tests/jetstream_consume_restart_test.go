package tests

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A pull Consume keeps going across a restart of the server: nats.go
// reconnects, its heartbeat check notices the pulls the old server held
// are gone and pulls again, and every message published before and after
// the restart is delivered (at least once), acked ones not again.
func TestJetStreamConsumeResumesAcrossServerRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	first := startJSAt(t, dir)
	addr := first.Addr().String()
	nc := connect(t, busURL(first), nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CR", Subjects: []string{"cr.>"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1000)
	cc, err := c.Consume(func(m jetstream.Msg) {
		if err := m.DoubleAck(ctx); err == nil {
			got <- string(m.Data())
		}
	}, jetstream.PullExpiry(time.Second), jetstream.PullHeartbeat(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	seen := map[string]bool{}
	await := func(n int) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for len(seen) < n {
			select {
			case s := <-got:
				seen[s] = true
			case <-deadline:
				t.Fatalf("%d of %d messages consumed", len(seen), n)
			}
		}
	}
	for i := range 20 {
		if _, err := js.Publish(ctx, "cr.x", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	await(20)

	shutdown(t, first)
	second := startJSOn(t, addr, dir)
	t.Cleanup(func() { shutdown(t, second) })
	for i := 20; i < 40; i++ {
		var err error
		for range 100 { // until the client has reconnected
			if _, err = js.Publish(ctx, "cr.x", []byte(fmt.Sprint(i))); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("publish %d after the restart: %v", i, err)
		}
	}
	await(40)
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 40 || ci.AckFloor.Stream != 40 || ci.NumAckPending != 0 {
		t.Fatalf("after the restart: stream %+v, consumer ack floor %+v, ack pending %d", info.State, ci.AckFloor, ci.NumAckPending)
	}
}

// startJSOn runs a bus with JetStream on a given host:port and store, for
// restart tests.
func startJSOn(t *testing.T, hostPort, storeDir string) *server.Server {
	t.Helper()
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	s, err := server.New(server.Options{Host: host, Port: p, StoreDir: storeDir, JetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}
