package tests

import (
	"bytes"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// Thousands of sockets that never authenticate cost the server only
// until the auth timeout: every one is closed with the reference's error
// and the goroutines and memory they held come back. Not parallel: it
// measures the whole process.
func TestAuthUnauthenticatedConnectionsAreReaped(t *testing.T) {
	conns := 5000
	if raceEnabled {
		conns = 1200 // two server goroutines and one reader each, under the race detector's 8128
	}
	const timeout = 2 * time.Second
	if n := raiseOpenFileLimit(); n < uint64(3*conns) {
		t.Skipf("open file limit %d is too low for %d connections", n, conns)
	}
	s := startBus(t, server.Options{Authorization: server.Authorization{Token: "t", Timeout: timeout}, MaxUnauthenticated: 2 * conns})
	addr := s.Addr().String()
	accepted := s.Varz().TotalConnections

	runtime.GC()
	goroutines := runtime.NumGoroutine()
	heap := heapInUse()

	clients := make([]net.Conn, 0, conns)
	t.Cleanup(func() {
		for _, c := range clients {
			_ = c.Close()
		}
	})
	start := time.Now()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial after %d: %v", len(clients), err)
		}
		clients = append(clients, c)
	}
	// Accepted, not open: the first ones may already have timed out.
	eventually(t, 5*time.Second, func() bool { return s.Varz().TotalConnections-accepted >= int64(conns) })
	if took := time.Since(start); took >= timeout*3/4 {
		t.Skipf("dialing took %v, near the %v auth timeout; machine too slow to tell", took, timeout)
	}
	held := heapInUse()
	t.Logf("%d idle connections: %d goroutines over the baseline, heap %+d KiB", conns, runtime.NumGoroutine()-goroutines, (held-heap)/1024)

	eventually(t, timeout+3*time.Second, func() bool { return s.Varz().Connections == 0 })
	// Every client was told why.
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad, firstBad := 0, ""
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(c)
			if !strings.HasSuffix(buf.String(), "-ERR 'Authentication Timeout'\r\n") {
				mu.Lock()
				if bad == 0 {
					firstBad = buf.String()
				}
				bad++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if bad > 0 {
		t.Errorf("%d of %d clients did not get 'Authentication Timeout' before the close; one got %q", bad, conns, firstBad)
	}
	for _, c := range clients {
		_ = c.Close()
	}
	clients = nil // the client side's memory is not the server's
	eventually(t, 5*time.Second, func() bool { return runtime.NumGoroutine() <= goroutines+10 })
	after := heapInUse()
	t.Logf("after the timeout: heap %+d KiB over the baseline", (after-heap)/1024)
	// The runtime keeps the descriptors of exited goroutines for reuse
	// (about 400 bytes each, 4 MB for these), so the first run of this
	// test in a process does not come all the way back.
	if after > heap+(held-heap)/2 {
		t.Errorf("heap %d KiB after closing, %d KiB before the connections, %d KiB with them", after/1024, heap/1024, held/1024)
	}
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// Past MaxUnauthenticated, new connections are refused as over the
// connection limit; authenticated ones do not count.
func TestAuthUnauthenticatedConnectionsAreBounded(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{Authorization: server.Authorization{Token: "t"}, MaxUnauthenticated: 2})
	addr := s.Addr().String()
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	refused := dialRaw(t, addr)
	if got := refused.expectClosed(); got != "-ERR 'maximum connections exceeded'\r\n" {
		t.Errorf("third unauthenticated connection got %q", got)
	}
	a.send(connectWith(`"auth_token":"t"`) + "PING\r\n")
	a.expect("PONG\r\n")
	c := dialRaw(t, addr) // a no longer counts
	c.send(connectWith(`"auth_token":"t"`) + "PING\r\n")
	c.expect("PONG\r\n")
	b.send(connectWith(`"auth_token":"t"`) + "PING\r\n")
	b.expect("PONG\r\n")
}

// The log names the user and why it was refused, and never a secret.
func TestAuthLogNamesUserNotSecret(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startBus(t, server.Options{Logger: log, Authorization: server.Authorization{Users: []server.User{
		{Name: "alice", Password: "correct-horse"},
	}}})
	addr := s.Addr().String()
	for _, in := range []string{
		connectWith(`"user":"alice","pass":"hunter2"`),
		connectWith(`"user":"mallory","pass":"hunter3"`),
		connectWith(`"auth_token":"hunter4"`),
	} {
		rc := dialRaw(t, addr)
		rc.send(in)
		rc.expectClosed()
	}
	ok := dialRaw(t, addr)
	ok.send(connectWith(`"user":"alice","pass":"correct-horse"`) + "PUB x 1\r\nx\r\nPING\r\n")
	ok.expect("PONG\r\n")
	eventually(t, 2*time.Second, func() bool { return strings.Count(logs.String(), "authorization violation") == 3 })
	out := logs.String()
	for _, want := range []string{"user=alice reason=\"wrong password\"", "user=mallory reason=\"unknown user\"", "reason=\"no credentials\""} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, secret := range []string{"hunter", "correct-horse"} {
		if strings.Contains(out, secret) {
			t.Errorf("log shows a secret %q:\n%s", secret, out)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
