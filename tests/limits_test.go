package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

func TestSlowConsumerIsCutOffWhileFastOneKeepsUp(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{MaxPending: 256 * 1024})
	// The slow subscriber never reads its socket.
	slow := dialRaw(t, s.Addr().String())
	slow.send("CONNECT {\"verbose\":false}\r\nSUB feed 1\r\nPING\r\n")
	slow.expect("PONG\r\n")

	fast := connect(t, busURL(s))
	var received atomic.Int64
	if _, err := fast.Subscribe("feed", func(*nats.Msg) { received.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := fast.Flush(); err != nil {
		t.Fatal(err)
	}
	pub := connect(t, busURL(s))
	payload := make([]byte, 1024)
	const msgs = 8000 // 8 MiB: far past the slow reader's socket buffers and limit
	for i := 1; i <= msgs; i++ {
		if err := pub.Publish("feed", payload); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 { // keep the fast reader's backlog well under the limit
			eventually(t, 10*time.Second, func() bool { return received.Load() == int64(i) })
		}
	}
	if !fast.IsConnected() {
		t.Fatal("the fast subscriber was disconnected")
	}
	eventually(t, 5*time.Second, func() bool { return s.Varz().SlowConsumers == 1 })
	slow.expectClosed()
}

func TestStaleConnectionIsDropped(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{PingInterval: 100 * time.Millisecond, MaxPingsOut: 2})
	rc := dialRaw(t, s.Addr().String())
	rc.send("CONNECT {\"verbose\":false}\r\n")
	rc.expect("PING\r\n")
	rc.expect("PING\r\n")
	if got := rc.expectClosed(); got != "-ERR 'Stale Connection'\r\n" {
		t.Fatalf("got %q", got)
	}
}

func TestAnsweredPingsKeepConnectionAlive(t *testing.T) {
	t.Parallel()
	// An interval a loaded race-enabled run answers well within: with
	// 50ms, a PONG read late under load counted as missed (CI saw it).
	s := startBus(t, server.Options{PingInterval: 250 * time.Millisecond, MaxPingsOut: 1})
	rc := dialRaw(t, s.Addr().String())
	rc.send("CONNECT {\"verbose\":false}\r\n")
	for i := 0; i < 5; i++ {
		rc.expect("PING\r\n")
		rc.send("PONG\r\n")
	}
}

func TestMaxConnections(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{MaxConnections: 2})
	connect(t, busURL(s))
	connect(t, busURL(s))
	_, err := nats.Connect(busURL(s), nats.NoReconnect())
	if err == nil || !strings.Contains(err.Error(), "maximum connections exceeded") {
		t.Fatalf("third connection: %v", err)
	}
}

func TestMaxSubscriptions(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{MaxSubscriptions: 2})
	rc := dialRaw(t, s.Addr().String())
	rc.send("CONNECT {\"verbose\":false}\r\nSUB a 1\r\nSUB b 2\r\nSUB c 3\r\nPING\r\n")
	rc.expect("-ERR 'maximum subscriptions exceeded'\r\nPONG\r\n")
}

func TestMonitoringEndpoints(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{HTTPPort: -1})
	nc := connect(t, busURL(s))
	sub, _ := nc.SubscribeSync("m")
	_ = nc.Publish("m", []byte("12345"))
	if _, err := sub.NextMsg(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.HTTPAddr().String()

	var health map[string]string
	getJSON(t, base+"/healthz", &health)
	if health["status"] != "ok" {
		t.Fatalf("healthz %v", health)
	}
	var varz map[string]any
	getJSON(t, base+"/varz", &varz)
	for key, want := range map[string]any{
		"server_id": s.ID(), "version": server.Version, "connections": 1.0, "subscriptions": 1.0,
		"in_msgs": 1.0, "out_msgs": 1.0, "in_bytes": 5.0, "out_bytes": 5.0, "max_payload": 1048576.0,
		"max_control_line": 4096.0, "max_connections": 65536.0, "ping_max": 2.0, "slow_consumers": 0.0,
	} {
		if fmt.Sprint(varz[key]) != fmt.Sprint(want) {
			t.Errorf("varz %s = %v, want %v", key, varz[key], want)
		}
	}
	for _, key := range []string{"uptime", "start", "now", "max_pending", "ping_interval", "write_deadline", "total_connections"} {
		if _, ok := varz[key]; !ok {
			t.Errorf("varz lacks %s", key)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func TestWriteDeadlineCutsOffStuckSocket(t *testing.T) {
	t.Parallel()
	// A huge pending limit, so only the write deadline can catch it.
	s := startBus(t, server.Options{MaxPending: 1 << 30, WriteDeadline: 200 * time.Millisecond})
	stuck := dialRaw(t, s.Addr().String())
	stuck.send("CONNECT {\"verbose\":false}\r\nSUB feed 1\r\nPING\r\n")
	stuck.expect("PONG\r\n")
	pub := connect(t, busURL(s))
	payload := make([]byte, 64*1024)
	for i := 0; s.Varz().SlowConsumers == 0; i++ {
		if i == 10000 { // 640 MiB: far beyond any socket buffer
			t.Fatal("the stuck reader was never cut off")
		}
		if err := pub.Publish("feed", payload); err != nil {
			t.Fatal(err)
		}
		if i%16 == 0 {
			if err := pub.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	stuck.expectClosed()
}
