package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// TestLameDuckDrainsClients puts bus into lame-duck mode with clients
// connected: nats.go's LameDuckModeHandler fires on every client at once,
// new clients are refused, every client is closed within the duration,
// and the stored messages are there after a restart (JetStream closed
// cleanly).
func TestLameDuckDrainsClients(t *testing.T) {
	t.Parallel()
	const clients = 6
	duration, grace := 2*time.Second, 300*time.Millisecond
	dir := t.TempDir()
	opts := server.Options{Host: "127.0.0.1", StoreDir: dir, JetStream: true, LameDuckDuration: duration, LameDuckGracePeriod: grace}
	s, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	url := busURL(s)
	addr := s.Addr().String()

	nc := connect(t, url)
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish("orders.1", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	nc.Close()

	var told atomic.Int32
	closed := make(chan time.Time, clients)
	for range clients {
		connect(t, url, nats.NoReconnect(),
			nats.LameDuckModeHandler(func(*nats.Conn) { told.Add(1) }),
			nats.ClosedHandler(func(*nats.Conn) { closed <- time.Now() }))
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- s.LameDuck(context.Background()) }()

	eventually(t, grace, func() bool { return told.Load() == clients })
	eventually(t, 2*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return true
		}
		_ = c.Close()
		return false
	})
	var first, last time.Time
	for i := range clients {
		select {
		case at := <-closed:
			if i == 0 {
				first = at
			}
			last = at
		case <-time.After(duration + 2*time.Second):
			t.Fatalf("%d of %d clients closed within %v", i, clients, duration)
		}
	}
	if first.Sub(start) < grace {
		t.Errorf("first client closed %v after lame duck began, before the %v grace period", first.Sub(start), grace)
	}
	if last.Sub(start) > duration+500*time.Millisecond {
		t.Errorf("last client closed %v after lame duck began, past the %v duration", last.Sub(start), duration)
	}
	if last.Sub(first) < (duration-grace)/4 {
		t.Errorf("clients closed within %v: not spread over the duration", last.Sub(first))
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("LameDuck: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("LameDuck did not return")
	}
	if err := s.LameDuck(context.Background()); err != nil {
		t.Fatalf("second LameDuck: %v", err)
	}

	// The stream is intact on a new server over the same store.
	s2 := startBus(t, server.Options{StoreDir: dir, JetStream: true})
	js2, err := connect(t, busURL(s2)).JetStream()
	if err != nil {
		t.Fatal(err)
	}
	info, err := js2.StreamInfo("ORDERS")
	if err != nil || info.State.Msgs != 3 {
		t.Fatalf("after lame duck and restart: %+v %v", info, err)
	}
}

// TestLameDuckInfoMatchesReference compares the INFO a client gets when
// the server enters lame-duck mode: the same fields, ldm true.
func TestLameDuckInfoMatchesReference(t *testing.T) {
	t.Parallel()
	s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), LameDuckDuration: 2 * time.Second, LameDuckGracePeriod: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	ref := startReferenceServer(t, &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		LameDuckDuration: 2 * time.Second, LameDuckGracePeriod: time.Second})
	infos := map[string]map[string]any{}
	for name, side := range map[string]struct {
		addr string
		ldm  func()
	}{
		"bus":       {s.Addr().String(), func() { go func() { _ = s.LameDuck(context.Background()) }() }},
		"reference": {ref.Addr().String(), func() { go ref.LameDuckShutdown() }},
	} {
		nc, err := net.Dial("tcp", side.addr)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(nc)
		if _, err := r.ReadString('\n'); err != nil { // the connect INFO
			t.Fatal(err)
		}
		if _, err := nc.Write([]byte("CONNECT {\"verbose\":false,\"protocol\":1}\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
		if line, err := r.ReadString('\n'); err != nil || line != "PONG\r\n" {
			t.Fatalf("%s: %q %v", name, line, err)
		}
		side.ldm()
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		for infos[name] == nil { // the reference may send other INFO first
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: after lame duck %q %v", name, line, err)
			}
			if !strings.HasPrefix(line, "INFO ") {
				continue
			}
			var info map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(line), "INFO ")), &info); err != nil {
				t.Fatal(err)
			}
			if info["ldm"] == true {
				infos[name] = info
			} else {
				t.Logf("%s: %s", name, line)
			}
		}
		_ = nc.Close()
	}
	bus, refInfo := infos["bus"], infos["reference"]
	if bus["ldm"] != true || refInfo["ldm"] != true {
		t.Fatalf("ldm: bus %v, reference %v", bus["ldm"], refInfo["ldm"])
	}
	var missing []string
	for k := range refInfo {
		if _, ok := bus[k]; !ok && k != "git_commit" && k != "xkey" {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("bus's lame-duck INFO lacks %v (reference: %v)", missing, refInfo)
	}
	shutdown(t, s)
}
