package tests

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The README's "Browsers and WebSocket" config works as shown with the
// bus binary: the user publishes inside its permissions over ws:// and is
// refused outside them. The test swaps the tls line for no_tls (it has no
// certificate at that path) and the port for a free one.
func TestWebSocketReadmeConfig(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(readme)
	i := strings.Index(sec, "## Browsers and WebSocket")
	if i < 0 {
		t.Fatal("README has no Browsers and WebSocket section")
	}
	sec = sec[i:]
	start := strings.Index(sec, "```yaml\n") + len("```yaml\n")
	cfg := sec[start : start+strings.Index(sec[start:], "```")]
	tlsLine := "  tls: {cert_file: /etc/bus/ws-cert.pem, key_file: /etc/bus/ws-key.pem}"
	if !strings.Contains(cfg, tlsLine) || !strings.Contains(cfg, "port: 8443") {
		t.Fatalf("README websocket config changed; the test rewrites its tls and port lines:\n%s", cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wsAddr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(wsAddr)
	cfg = strings.Replace(cfg, tlsLine, "  no_tls: true\n  host: 127.0.0.1", 1)
	cfg = strings.Replace(cfg, "port: 8443", "port: "+port, 1)
	cfg += "host: 127.0.0.1\nport: -1\nhttp_port: -1\nstore_dir: " + filepath.ToSlash(t.TempDir()) + "\n"
	path := filepath.Join(t.TempDir(), "bus.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	startBusCommand(t, bin, "serve", "--config", path)

	errs := make(chan error, 1)
	nc := connect(t, "ws://web:s3cr3t@"+wsAddr, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	sub, err := nc.SubscribeSync("chat.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("chat.hello", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "hi" {
		t.Fatalf("got %v, %v", m, err)
	}
	_ = nc.Publish("other.x", []byte("no"))
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("got %v, want a permissions violation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("publish outside the permissions not refused")
	}
}
