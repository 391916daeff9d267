//go:build unix

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestScaleConnections measures many idle connections (issue #30):
// MEASURE_SCALE_CONNS plain TCP clients (default 10,000), each sending
// CONNECT, one SUB to the same subject and a PING, then the server's RSS
// per connection, and the fan-out latency of one publish to all of them
// (from the publish until the last one has read its MSG), in
// MEASURE_SCALE_ROUNDS rounds (default 20). Raw clients rather than
// nats.go ones keep the test process small enough to run next to the
// server. A measurement, not a check:
//
//	MEASURE_SCALE=1 go test -count=1 -v -timeout 30m -run TestScaleConnections ./tests
//
// with MEASURE_BUS_BIN and MEASURE_NATS_SERVER_BIN as for TestScaleStream.
// The open-files limit is raised for the test and the servers it starts
// (past the hard limit only with CAP_SYS_RESOURCE). Each run dials from
// fresh loopback source addresses, one per 20,000 clients, each with its
// own ephemeral port range.
func TestScaleConnections(t *testing.T) {
	if os.Getenv("MEASURE_SCALE") == "" {
		t.Skip("set MEASURE_SCALE=1 to measure")
	}
	n := envInt(t, "MEASURE_SCALE_CONNS", 10_000)
	rounds := envInt(t, "MEASURE_SCALE_ROUNDS", 20)
	if got := raiseOpenFilesTo(uint64(n) + 4096); got < uint64(n)+100 {
		t.Skipf("open-files limit %d is too low for %d connections (the hard limit needs CAP_SYS_RESOURCE to rise)", got, n)
	}
	for _, srv := range scaleServers(t) {
		t.Run(srv.name, func(t *testing.T) {
			p := startScaleServer(t, srv, t.TempDir())
			before := rss(t, p.cmd.Process.Pid)
			start := time.Now()
			fan := dialRawSubscribers(t, p.nc.ConnectedAddr(), n)
			after := rss(t, p.cmd.Process.Pid)
			t.Logf("%d connections in %v: RSS %d MB before, %d MB after: %.1f KiB a connection; open files %d",
				n, time.Since(start).Round(time.Millisecond), before.rss>>20, after.rss>>20,
				float64(after.rss-before.rss)/float64(n)/1024, p.fds())

			lat := make([]time.Duration, 0, rounds)
			payload := make([]byte, 16)
			for range rounds {
				fan.got.Store(0)
				start := time.Now()
				if err := p.nc.Publish("scale.fan", payload); err != nil {
					t.Fatal(err)
				}
				if err := p.nc.Flush(); err != nil {
					t.Fatal(err)
				}
				select {
				case last := <-fan.last:
					lat = append(lat, last.Sub(start))
				case <-time.After(time.Minute):
					t.Fatalf("%d of %d subscribers received the publish", fan.got.Load(), n)
				}
			}
			slices.Sort(lat)
			t.Logf("fan-out of one publish to %d subscribers, %d rounds: min %v, median %v, max %v; RSS %d MB",
				n, rounds, lat[0].Round(time.Microsecond), lat[len(lat)/2].Round(time.Microsecond),
				lat[len(lat)-1].Round(time.Microsecond), rss(t, p.cmd.Process.Pid).rss>>20)
			time.Sleep(15 * time.Second) // the measurement: memory held by idle connections
			idle := rss(t, p.cmd.Process.Pid)
			t.Logf("after 15 s idle: RSS %d MB, %.1f KiB a connection (peak %d MB)",
				idle.rss>>20, float64(idle.rss-before.rss)/float64(n)/1024, idle.peak>>20)
		})
	}
}

// rawSubscribers are plain TCP clients subscribed to scale.fan; each
// counts the MSG it reads in got, and the one that brings got to the
// number of clients sends the time on last.
type rawSubscribers struct {
	got  atomic.Int64
	last chan time.Time
}

// rawSources counts the loopback source addresses dialRawSubscribers
// has used.
var rawSources atomic.Int64

func dialRawSubscribers(t *testing.T, addr string, n int) *rawSubscribers {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	fan := &rawSubscribers{last: make(chan time.Time, 1)}
	base := int(rawSources.Add(int64(n/20_000+1))) - (n/20_000 + 1) // fresh source addresses for each run
	var (
		readers sync.WaitGroup
		mu      sync.Mutex
		conns   []net.Conn
	)
	t.Cleanup(func() {
		mu.Lock()
		for _, c := range conns {
			_ = c.(*net.TCPConn).SetLinger(0) // a reset, leaving no TIME_WAIT to hold the port from the next run
			c.Close()
		}
		mu.Unlock()
		readers.Wait()
	})
	jobs := make(chan int)
	errs := make(chan error, 64)
	var dialers sync.WaitGroup
	for range 64 { // a bounded number connecting at once: the listen backlog and the servers' pre-auth limits
		dialers.Add(1)
		go func() {
			defer dialers.Done()
			for i := range jobs {
				// One loopback source address per 20,000 clients: each has its own ephemeral port range.
				src := base + i/20_000
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(src/250), byte(1+src%250))}}
				c, err := d.Dial("tcp", net.JoinHostPort(host, port))
				if err == nil {
					err = subscribeRaw(c)
				}
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				readers.Add(1)
				go func() {
					defer readers.Done()
					fan.read(c, int64(n))
				}()
			}
		}()
	}
	for i := range n {
		select {
		case jobs <- i:
		case err := <-errs:
			close(jobs)
			dialers.Wait()
			t.Fatal(err)
		}
	}
	close(jobs)
	dialers.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	return fan
}

// subscribeRaw sends CONNECT, SUB and PING and reads up to the PONG.
func subscribeRaw(c net.Conn) error {
	if err := c.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		return err
	}
	if _, err := c.Write([]byte("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB scale.fan 1\r\nPING\r\n")); err != nil {
		return err
	}
	var buf []byte
	for !bytes.Contains(buf, []byte("PONG\r\n")) {
		b := make([]byte, 4096)
		k, err := c.Read(b)
		if err != nil {
			return err
		}
		if buf = append(buf, b[:k]...); bytes.Contains(buf, []byte("-ERR")) {
			return fmt.Errorf("server: %q", buf)
		}
	}
	return c.SetDeadline(time.Time{})
}

// read counts every MSG on c and answers the server's PINGs until c is closed.
func (f *rawSubscribers) read(c net.Conn, n int64) {
	r := bufio.NewReaderSize(c, 512)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		switch {
		case bytes.HasPrefix(line, []byte("MSG ")):
			if _, err := r.ReadSlice('\n'); err != nil { // the 16-byte payload
				return
			}
			if f.got.Add(1) == n {
				f.last <- time.Now()
			}
		case bytes.HasPrefix(line, []byte("PING")):
			if _, err := c.Write([]byte("PONG\r\n")); err != nil {
				return
			}
		}
	}
}

// raiseOpenFilesTo lifts the open-files limit to at least want (the hard
// limit too, which needs CAP_SYS_RESOURCE) and returns the soft limit. The
// servers the test starts inherit it: after a Setrlimit, os/exec no longer
// restores the limit the process started with.
func raiseOpenFilesTo(want uint64) uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	if rl.Max < want {
		up := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			return want
		}
	}
	rl.Cur = max(rl.Cur, min(want, rl.Max))
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	return rl.Cur
}
