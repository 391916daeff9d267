package tests

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// TestTotalPendingIsBounded: subscribers that never read, each under its
// own max_pending, together pass max_pending_total: the longest queues
// are closed as slow consumers, and a subscriber that reads keeps getting
// everything.
func TestTotalPendingIsBounded(t *testing.T) {
	t.Parallel()
	logger, logs := newLogBuffer()
	s := startBus(t, server.Options{MaxPending: 16 << 20, MaxPendingTotal: 16 << 20, Logger: logger})
	// Four subscribers that never read (small receive buffers, so their
	// queues grow on the server rather than in the kernel).
	for range 4 {
		c, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		if _, err := c.Write([]byte("CONNECT {\"verbose\":false}\r\nSUB load 1\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	reader := connect(t, busURL(s))
	var got atomic.Int64
	if _, err := reader.Subscribe("load", func(*nats.Msg) { got.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := reader.Flush(); err != nil {
		t.Fatal(err)
	}
	pub := connect(t, busURL(s))
	payload := make([]byte, 32<<10)
	const n = 3000 // 96 MiB: far past 16 MiB for the four together
	// Published in rounds of 1 MiB that the reader has received before
	// the next: its queue then stays far shorter than the never-reading
	// ones, which is what the bound must tell apart. Unpaced, a reader
	// slowed by a loaded machine (-race in CI) could fall more than the
	// others behind and be shed itself, as a slow consumer rightly is.
	const round = 32
	for sent := 0; sent < n; {
		for range min(round, n-sent) {
			if err := pub.Publish("load", payload); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		if err := pub.Flush(); err != nil {
			t.Fatal(err)
		}
		if !waitFor(20*time.Second, func() bool { return got.Load() >= int64(sent) }) {
			break
		}
	}
	if got.Load() != n {
		t.Fatalf("the reading subscriber got %d of %d (reconnects %d)\n%s", got.Load(), n, reader.Stats().Reconnects,
			strings.Join(append(logs.lines("client closed"), logs.lines("max_pending_total")...), "\n"))
	}
	if !reader.IsConnected() {
		t.Fatal("the reading subscriber was disconnected")
	}
	shed := logs.lines("over max_pending_total")
	if len(shed) == 0 {
		t.Fatalf("no connection was closed for the total; slow consumers: %d\n%s", s.Varz().SlowConsumers, strings.Join(logs.lines("lient closed"), "\n"))
	}
	if v := s.Varz(); v.SlowConsumers < 1 {
		t.Fatalf("slow consumers %d", v.SlowConsumers)
	}
}
