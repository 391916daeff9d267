package tests

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// WebSocket sockets yet to authenticate, in the handshake or upgraded,
// count with TCP ones against max_unauthenticated: two idle ones shut
// out a third client of either kind, until they go.
func TestWebSocketCountsAgainstPreAuthLimit(t *testing.T) {
	// Long handshake and auth timeouts: the two pre-auth sockets must stay
	// until the test closes one, however slow a loaded machine is (with
	// the 2 s defaults they could time out before the first check).
	auth := wsUsers()
	auth.Timeout = 30 * time.Second
	s, wsURL := startWSBus(t, server.Options{Authorization: auth, MaxUnauthenticated: 2,
		WebSocket: server.WebSocketOptions{HandshakeTimeout: 30 * time.Second}})
	addr := s.WebSocketAddr().String()
	idle, err := net.Dial("tcp", addr) // never sends its request
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	upgraded := wsHandshake(t, addr, "GET", nil) // upgraded, never sends CONNECT
	if upgraded.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", upgraded.StatusCode)
	}
	good := "alice:pa@"
	eventually(t, 5*time.Second, func() bool {
		nc, err := nats.Connect("nats://"+good+s.Addr().String(), nats.MaxReconnects(0))
		if err == nil {
			nc.Close()
		}
		return err != nil
	})
	if nc, err := nats.Connect(strings.Replace(wsURL, "ws://", "ws://"+good, 1), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a WebSocket client got in over the pre-auth limit")
	}
	_ = idle.Close()
	eventually(t, 5*time.Second, func() bool {
		nc, err := nats.Connect("nats://"+good+s.Addr().String(), nats.MaxReconnects(0))
		if err == nil {
			nc.Close()
		}
		return err == nil
	})
}

// The handshake is bounded in time and size before any authentication:
// a silent socket is dropped after handshake_timeout, and a request with
// oversized headers is refused.
func TestWebSocketHandshakeBounds(t *testing.T) {
	s, _ := startWSBus(t, server.Options{WebSocket: server.WebSocketOptions{HandshakeTimeout: 200 * time.Millisecond}})
	addr := s.WebSocketAddr().String()
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := io.ReadAll(silent); err != nil {
		t.Fatalf("silent socket not closed by the server: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("silent socket kept %v", d)
	}

	big, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	_ = big.SetDeadline(time.Now().Add(5 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nCookie: " + strings.Repeat("a", 64<<10) + "\r\n\r\n"
	_, _ = big.Write([]byte(req)) // the server may hang up before it is all written
	resp, err := http.ReadResponse(bufio.NewReader(big), nil)
	var ne net.Error
	switch {
	case err == nil && resp.StatusCode == http.StatusRequestHeaderFieldsTooLarge:
	case err != nil && !errors.As(err, &ne):
		// closed without an answer: also refused
	default:
		t.Fatalf("oversized handshake: %v %v", resp, err)
	}
}
