package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// startBus runs an in-process bus on a free loopback port and stops it
// when the test ends.
func startBus(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	opts.Host = "127.0.0.1"
	if opts.StoreDir == "" {
		opts.StoreDir = t.TempDir()
	}
	s, err := server.New(opts)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { shutdown(t, s) })
	return s
}

// startBusAt runs a bus on a given host:port, for restart tests.
func startBusAt(t *testing.T, hostPort, storeDir string) *server.Server {
	t.Helper()
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return startBus(t, server.Options{Host: host, Port: p, StoreDir: storeDir})
}

func shutdown(t testing.TB, s *server.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func busURL(s *server.Server) string { return "nats://" + s.Addr().String() }

// connect opens a nats.go connection that is closed when the test ends.
func connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// rawConn is a plain TCP client for byte-exact protocol tests.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	rc := &rawConn{t: t, nc: nc, r: bufio.NewReader(nc)}
	if line := rc.line(); !strings.HasPrefix(line, "INFO {") {
		t.Fatalf("first line %q, want INFO", line)
	}
	return rc
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := rc.nc.Write([]byte(s)); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// line reads one line including its CRLF, failing after 5 s.
func (rc *rawConn) line() string {
	rc.t.Helper()
	_ = rc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := rc.r.ReadString('\n')
	if err != nil {
		rc.t.Fatalf("read line: %v (got %q)", err, s)
	}
	return s
}

// expect reads len(want) bytes and compares them.
func (rc *rawConn) expect(want string) {
	rc.t.Helper()
	got := make([]byte, 0, len(want))
	for len(got) < len(want) {
		got = append(got, rc.line()...)
	}
	if string(got) != want {
		rc.t.Fatalf("got %q, want %q", got, want)
	}
}

// expectClosed reads until EOF and returns what came before it.
func (rc *rawConn) expectClosed() string {
	rc.t.Helper()
	_ = rc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := rc.r.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				rc.t.Fatalf("connection still open; got %q", sb.String())
			}
			return sb.String()
		}
	}
}

// jsonHasKey reports whether a JSON object has key at its top level.
func jsonHasKey(b []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// sameOutcomes fails the test unless bus's outcomes of a scenario are the
// reference's, line for line, and prints both where they differ.
func sameOutcomes(t *testing.T, ref, got []string) {
	t.Helper()
	for i := range max(len(ref), len(got)) {
		var r, g string
		if i < len(ref) {
			r = ref[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if r != g {
			t.Errorf("step %d differs\n bus: %s\n ref: %s", i, g, r)
		}
	}
}

// scenarioJS is a JetStream client on url and a context for one scenario,
// both ended with the test.
func scenarioJS(t *testing.T, url string, d time.Duration) (jetstream.JetStream, context.Context) {
	t.Helper()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return js, ctx
}

// createOutcome creates a stream and describes the outcome in a form that
// does not depend on the server: ok, or the error code and text. The text
// after "stream transform:" (10156) is worded by each server's transform
// engine, so only its code is kept.
func createOutcome(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, string) {
	s, err := js.CreateStream(ctx, cfg)
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return s, "create " + cfg.Name + ": ok"
	case errors.As(err, &apiErr) && apiErr.ErrorCode == 10156:
		return s, fmt.Sprintf("create %s: %d", cfg.Name, apiErr.ErrorCode)
	case errors.As(err, &apiErr):
		return s, fmt.Sprintf("create %s: %d %s", cfg.Name, apiErr.ErrorCode, apiErr.Description)
	default:
		return s, fmt.Sprintf("create %s: %v", cfg.Name, err)
	}
}

// mustRequest sends a request and returns the answer's body, failing the
// test on a timeout or no responders.
func mustRequest(t *testing.T, nc *nats.Conn, subject, body string) []byte {
	t.Helper()
	m, err := nc.Request(subject, []byte(body), 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	return m.Data
}
