package main

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// clientAddr finds the client address in the "serving" log line.
var clientAddrRE = regexp.MustCompile(`"?client"?[=:]"?([0-9.]+:[0-9]+)`)

func TestServeStopsGracefullyOnSignal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		signal syscall.Signal
		format string
	}{
		{"sigterm_text_logs", syscall.SIGTERM, "text"},
		{"sigint_json_logs", syscall.SIGINT, "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startBus(t, nil, "serve", "--port", "0", "--http-port", "0", "--host", "127.0.0.1",
				"--store-dir", t.TempDir(), "--log-format", tt.format)
			p.waitServing(t)

			// With --port 0 the log must show the port actually bound.
			m := clientAddrRE.FindStringSubmatch(p.stderr.String())
			if m == nil || strings.HasSuffix(m[1], ":0") {
				t.Fatalf("serving line has no bound client address; stderr:\n%s", p.stderr)
			}
			nc, err := net.Dial("tcp", m[1])
			if err != nil {
				t.Fatalf("dial logged client address: %v", err)
			}
			if err := nc.Close(); err != nil {
				t.Fatal(err)
			}

			if err := p.cmd.Process.Signal(tt.signal); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != exitOK {
				t.Fatalf("exit %d after %v, want 0; stderr:\n%s", code, tt.signal, p.stderr)
			}
			if !strings.Contains(p.stderr.String(), "shutting down") {
				t.Errorf("no shutdown logged; stderr:\n%s", p.stderr)
			}
		})
	}
}

// A config file holding only comments is an empty config: bus starts with
// the defaults (ports overridden here so the test can run anywhere).
func TestServeWithCommentOnlyConfig(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"bus.yaml", "bus.toml"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, name, "# settings will go here\n\n# and here\n")
			p := startBus(t, []string{"BUS_STORE_DIR=" + t.TempDir()},
				"serve", "--config", path, "--host", "127.0.0.1", "--port", "0", "--http-port", "0")
			p.waitServing(t)
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != exitOK {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderr)
			}
		})
	}
}

func TestServeExitsOneWhenPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port

	p := runBus(t, nil, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--http-port", "0", "--store-dir", t.TempDir())
	stderr := p.stderr.String()
	if p.code != exitFailure {
		t.Errorf("exit %d, want %d; stderr:\n%s", p.code, exitFailure, stderr)
	}
	if !strings.Contains(stderr, "start: ") || strings.Contains(stderr, "--help") {
		t.Errorf("stderr should report the start error without usage help:\n%s", stderr)
	}
}
