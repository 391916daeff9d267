package tests

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestBackupMeasure measures `nats stream backup` and `nats stream
// restore` of one large stream, and `nats account backup` and `restore`
// of many small ones, against bus and (with MEASURE_NATS_SERVER_BIN) a
// nats-server: wall time, the server's peak RSS during each, and the
// latency of a publisher storing into another stream meanwhile. A
// measurement, not a check, and slow, so it runs only when asked
// (docs/backup.md, "Measured"):
//
//	MEASURE_BACKUP=1 MEASURE_BACKUP_MB=1024 MEASURE_BACKUP_STREAMS=1000 \
//	  MEASURE_NATS_SERVER_BIN=/path/to/nats-server \
//	  go test -count=1 -v -timeout 2h -run TestBackupMeasure ./tests
func TestBackupMeasure(t *testing.T) {
	if os.Getenv("MEASURE_BACKUP") == "" {
		t.Skip("set MEASURE_BACKUP=1 to measure")
	}
	mb, _ := strconv.Atoi(os.Getenv("MEASURE_BACKUP_MB"))
	if mb == 0 {
		mb = 1024
	}
	streams, _ := strconv.Atoi(os.Getenv("MEASURE_BACKUP_STREAMS"))
	if streams == 0 {
		streams = 1000
	}
	bin := natsCLI(t)
	bus, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]func(port int, dir string) *exec.Cmd{
		"bus": func(port int, dir string) *exec.Cmd {
			return exec.Command(bus, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
				"--http-port", "0", "--store-dir", dir, "--log-level", "warn")
		},
	}
	if ref := os.Getenv("MEASURE_NATS_SERVER_BIN"); ref != "" {
		servers["nats-server"] = func(port int, dir string) *exec.Cmd {
			return exec.Command(ref, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", dir, "-l", os.DevNull)
		}
	}
	for _, name := range []string{"bus", "nats-server"} {
		if servers[name] == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m := startMeasured(t, servers[name])
			m.large(t, bin, mb)
			m.many(t, bin, streams)
		})
	}
}

// measured is a server process under measurement, with a client.
type measured struct {
	url string
	pid int
	nc  *nats.Conn
	js  jetstream.JetStream
}

// startMeasured starts command's server on a free port with a new store
// directory and connects to it.
func startMeasured(t *testing.T, command func(port int, dir string) *exec.Cmd) *measured {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := command(port, t.TempDir())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	m := &measured{url: fmt.Sprintf("nats://127.0.0.1:%d", port), pid: cmd.Process.Pid}
	if !waitFor(20*time.Second, func() bool { // the process is starting; nothing to wait on
		m.nc, err = nats.Connect(m.url)
		return err == nil
	}) {
		t.Fatal(err)
	}
	t.Cleanup(m.nc.Close)
	m.js, _ = jetstream.New(m.nc)
	return m
}

// during runs the nats CLI command while sampling the server's RSS and
// timing one publish every 5 ms to LAT (with no args, for 3 s alone, the
// baseline); it returns the wall time, the
// peak RSS and the publish latencies.
func (m *measured) during(t *testing.T, bin string, args ...string) (time.Duration, int64, []time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var peak int64
	var lat []time.Duration
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			peak = max(peak, rss(t, m.pid).rss)
			time.Sleep(50 * time.Millisecond) // a sampling period
		}
	}()
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			start := time.Now()
			if _, err := m.js.Publish(context.Background(), "lat.x", []byte("ping")); err == nil {
				lat = append(lat, time.Since(start))
			}
			time.Sleep(5 * time.Millisecond) // the publisher's pace
		}
	}()
	start := time.Now()
	var out string
	var err error
	if len(args) == 0 {
		time.Sleep(3 * time.Second) // the baseline: a window with no command
	} else {
		cctx, ccancel := context.WithTimeout(context.Background(), time.Hour)
		out, err = runCLI(t, cctx, bin, m.url, args...)
		ccancel()
	}
	took := time.Since(start)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("nats %v: %v\n%s", args, err, out)
	}
	return took, peak, lat
}

func latencies(l []time.Duration) string {
	if len(l) == 0 {
		return "no publishes"
	}
	slices.Sort(l)
	q := func(p float64) time.Duration { return l[min(len(l)-1, int(float64(len(l))*p))] }
	return fmt.Sprintf("publish p50 %v p99 %v max %v (%d)", q(0.5).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), l[len(l)-1].Round(10*time.Microsecond), len(l))
}

func (m *measured) large(t *testing.T, bin string, mb int) {
	ctx := context.Background()
	if _, err := m.js.CreateStream(ctx, jetstream.StreamConfig{Name: "LAT", Subjects: []string{"lat.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big.>"}}); err != nil {
		t.Fatal(err)
	}
	// Every message its own random bytes: s2 finds nothing to compress,
	// so the backup is as large as the stream.
	rng := mrand.NewChaCha8([32]byte{1})
	start := time.Now()
	for i := range mb * 128 {
		data := make([]byte, 8<<10)
		_, _ = rng.Read(data)
		if _, err := m.js.PublishAsync("big.x", data); err != nil {
			t.Fatal(err)
		}
		if i%4096 == 4095 {
			<-m.js.PublishAsyncComplete()
		}
	}
	<-m.js.PublishAsyncComplete()
	t.Logf("filled %d MiB in %v; RSS %d MiB", mb, time.Since(start).Round(time.Millisecond), rss(t, m.pid).rss>>20)
	_, _, base := m.during(t, bin)
	t.Logf("baseline: %s", latencies(base))
	dir := filepath.Join(t.TempDir(), "big")
	took, peak, lat := m.during(t, bin, "stream", "backup", "BIG", dir, "--no-progress")
	size := dirSize(dir)
	t.Logf("backup of %d MiB: %v (%.0f MiB/s), %d MiB on disk, peak RSS %d MiB, %s", mb, took.Round(time.Millisecond),
		float64(mb)/took.Seconds(), size>>20, peak>>20, latencies(lat))
	if err := m.js.DeleteStream(ctx, "BIG"); err != nil {
		t.Fatal(err)
	}
	took, peak, lat = m.during(t, bin, "stream", "restore", dir, "--no-progress")
	t.Logf("restore of %d MiB: %v (%.0f MiB/s), peak RSS %d MiB, %s", mb, took.Round(time.Millisecond),
		float64(mb)/took.Seconds(), peak>>20, latencies(lat))
	if err := m.js.DeleteStream(ctx, "BIG"); err != nil {
		t.Fatal(err)
	}
}

func (m *measured) many(t *testing.T, bin string, n int) {
	ctx := context.Background()
	for i := range n {
		name := fmt.Sprintf("S%04d", i)
		if _, err := m.js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"s." + name}}); err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if _, err := m.js.PublishAsync("s."+name, []byte("a small message")); err != nil {
				t.Fatal(err)
			}
		}
	}
	<-m.js.PublishAsyncComplete()
	if err := m.js.DeleteStream(ctx, "LAT"); err != nil { // the publisher's stream is not backed up
		t.Fatal(err)
	}
	t.Logf("%d streams of 10 messages made; RSS %d MiB", n, rss(t, m.pid).rss>>20)
	dir := filepath.Join(t.TempDir(), "account")
	took, peak, _ := m.during(t, bin, "account", "backup", dir, "--force")
	t.Logf("account backup of %d streams: %v, peak RSS %d MiB", n, took.Round(time.Millisecond), peak>>20)
	for i := range n {
		if err := m.js.DeleteStream(ctx, fmt.Sprintf("S%04d", i)); err != nil {
			t.Fatal(err)
		}
	}
	took, peak, _ = m.during(t, bin, "account", "restore", dir)
	t.Logf("account restore of %d streams: %v, peak RSS %d MiB", n, took.Round(time.Millisecond), peak>>20)
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}
