package tests

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestScaleStream measures what one big stream costs a server process
// (issue #30): it publishes MEASURE_SCALE_MSGS messages (default
// 1,000,000) of MEASURE_SCALE_SIZE bytes (default 64) to one subject with
// async publishes, restarts the server, reads the whole stream with an
// ordered consumer and idles MEASURE_SCALE_IDLE (default 70s), logging
// RSS, open files and disk use at each step. It is a measurement, not a
// check, and slow, so it runs only when asked:
//
//	MEASURE_SCALE=1 go test -count=1 -v -timeout 1h -run TestScaleStream ./tests
//
// MEASURE_BUS_BIN names a bus binary to measure instead of this tree's,
// MEASURE_BUS_BEFORE_BIN one to measure beside it (as "bus-before");
// MEASURE_NATS_SERVER_BIN names a nats-server binary to measure as well
// (go build -o /tmp/nats-server github.com/nats-io/nats-server/v2 builds
// the pinned one). docs/scaling.md has the figures.
func TestScaleStream(t *testing.T) {
	if os.Getenv("MEASURE_SCALE") == "" {
		t.Skip("set MEASURE_SCALE=1 to measure")
	}
	n := envInt(t, "MEASURE_SCALE_MSGS", 1_000_000)
	size := envInt(t, "MEASURE_SCALE_SIZE", 64)
	idle := 70 * time.Second
	if v := os.Getenv("MEASURE_SCALE_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		idle = d
	}
	for _, srv := range scaleServers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			dir := t.TempDir()
			p, js := startScaleStream(t, ctx, srv, dir, "scale.>")
			start := time.Now()
			data := make([]byte, size)
			publishAsync(t, js, n, func(int) *nats.Msg { return &nats.Msg{Subject: "scale.x", Data: data} })
			pubRate := float64(n) / time.Since(start).Seconds()
			t.Logf("publish %d x %d B: %.0f msgs/s; RSS %s, open files %d", n, size, pubRate, p.rss(t), p.fds())
			p, js, _, took := restartScaleStream(t, ctx, srv, dir, p)
			t.Logf("restart until STREAM.INFO answers %v; RSS %s, open files %d, disk %d MB (%.1f B/msg)",
				took, p.rss(t), p.fds(), diskBytes(t, dir)>>20, float64(diskBytes(t, dir))/float64(n))

			start = time.Now()
			readOrdered(t, ctx, js, n)
			t.Logf("ordered read: %.0f msgs/s; RSS %s, open files %d", float64(n)/time.Since(start).Seconds(), p.rss(t), p.fds())
			time.Sleep(idle) // the measurement: memory given back while idle
			t.Logf("after %v idle: RSS %s, open files %d", idle, p.rss(t), p.fds())
		})
	}
}

// scaleServer says how to start one kind of server.
type scaleServer struct {
	name    string
	command func(port int, dir string) *exec.Cmd
}

func scaleServers(t *testing.T) []scaleServer {
	bus := os.Getenv("MEASURE_BUS_BIN")
	if bus == "" {
		var err error
		if bus, err = busBinary(); err != nil {
			t.Fatal(err)
		}
	}
	out := []scaleServer{{"bus", func(port int, dir string) *exec.Cmd {
		return exec.Command(bus, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
			"--http-port", "0", "--store-dir", dir, "--log-level", "warn")
	}}}
	if before := os.Getenv("MEASURE_BUS_BEFORE_BIN"); before != "" { // a before/after pair in one run
		out = append(out, scaleServer{"bus-before", func(port int, dir string) *exec.Cmd {
			return exec.Command(before, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
				"--http-port", "0", "--store-dir", dir, "--log-level", "warn")
		}})
	}
	if ref := os.Getenv("MEASURE_NATS_SERVER_BIN"); ref != "" {
		out = append(out, scaleServer{"nats-server", func(port int, dir string) *exec.Cmd {
			return exec.Command(ref, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", dir)
		}})
	}
	return out
}

// scaleProc is one running server process and a connection to it.
type scaleProc struct {
	cmd *exec.Cmd
	nc  *nats.Conn
}

func startScaleServer(t *testing.T, srv scaleServer, dir string) *scaleProc {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := srv.command(port, dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &scaleProc{cmd: cmd}
	t.Cleanup(func() { p.stop(t) })
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	if !waitFor(5*time.Minute, func() bool { // the process is starting; nothing to wait on
		p.nc, err = nats.Connect(url, nats.MaxReconnects(0))
		return err == nil
	}) {
		t.Fatal(err)
	}
	return p
}

// startScaleStream starts srv on dir and creates stream S capturing subjects.
func startScaleStream(t *testing.T, ctx context.Context, srv scaleServer, dir, subjects string) (*scaleProc, jetstream.JetStream) {
	t.Helper()
	p := startScaleServer(t, srv, dir)
	js := p.jetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{subjects}}); err != nil {
		t.Fatal(err)
	}
	return p, js
}

// restartScaleStream stops p as an operator's restart does, starts srv on
// dir again and reports how long until STREAM.INFO of S answered.
func restartScaleStream(t *testing.T, ctx context.Context, srv scaleServer, dir string, p *scaleProc) (*scaleProc, jetstream.JetStream, jetstream.Stream, time.Duration) {
	t.Helper()
	p.stop(t)
	start := time.Now()
	p = startScaleServer(t, srv, dir)
	js := p.jetStream(t)
	s, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	return p, js, s, time.Since(start).Round(time.Millisecond)
}

func (p *scaleProc) jetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(p.nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		t.Fatal(err)
	}
	// JetStream answers once the store is open.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		if _, err := js.AccountInfo(ctx); err == nil {
			return js
		} else if ctx.Err() != nil {
			t.Fatal(err)
		}
	}
}

// stop ends the process gracefully (SIGTERM), as an operator's restart does.
func (p *scaleProc) stop(t *testing.T) {
	if p.cmd == nil {
		return
	}
	if p.nc != nil {
		p.nc.Close()
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	p.cmd = nil
}

func (p *scaleProc) rss(t *testing.T) string {
	m := rss(t, p.cmd.Process.Pid)
	return fmt.Sprintf("%d MB (peak %d MB)", m.rss>>20, m.peak>>20)
}

// fds counts the process's open file descriptors.
func (p *scaleProc) fds() int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// publishAsync publishes msg(0) … msg(n-1) with async publishes and waits
// for every ack.
func publishAsync(t *testing.T, js jetstream.JetStream, n int, msg func(i int) *nats.Msg) {
	t.Helper()
	var stall time.Duration // the longest a publish waited for room: the server's longest pause
	for i := range n {
		start := time.Now()
		if _, err := js.PublishMsgAsync(msg(i), jetstream.WithStallWait(time.Minute)); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		stall = max(stall, time.Since(start))
	}
	t.Logf("longest wait for a publish slot: %v", stall.Round(time.Millisecond))
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(10 * time.Minute):
		t.Fatal("publishes not acknowledged")
	}
}

func readOrdered(t *testing.T, ctx context.Context, js jetstream.JetStream, n int) {
	t.Helper()
	c, err := js.OrderedConsumer(ctx, "S", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	got := 0
	cc, err := c.Consume(func(m jetstream.Msg) {
		if got++; got == n {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("read %d of %d", got, n)
	}
}

func diskBytes(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Sys().(*syscall.Stat_t).Blocks * 512 // what du counts: preallocated space too
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}
