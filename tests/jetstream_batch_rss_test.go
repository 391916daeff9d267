package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestAtomicBatchStagingRSS measures what never-committed atomic batches
// cost a server process (security issue #22, route 8): four batches of
// 250 one-megabyte messages, none committed, to a stream with max_bytes
// 10 MB. It reports the process's resident memory before, after the
// batches and after the batch timeout, and what the server replied. It
// is a measurement, not a check, and slow (it waits out the 10 s batch
// timeout), so it runs only when asked:
//
//	MEASURE_BATCH_RSS=1 go test -count=1 -v -run TestAtomicBatchStagingRSS ./tests
//
// (Not BUS_…: bus reads those as its configuration and refuses unknown
// ones.) MEASURE_BUS_BIN names a bus binary to measure instead of this tree's;
// MEASURE_NATS_SERVER_BIN names a nats-server binary to measure as well.
func TestAtomicBatchStagingRSS(t *testing.T) {
	if os.Getenv("MEASURE_BATCH_RSS") == "" {
		t.Skip("set MEASURE_BATCH_RSS=1 to measure")
	}
	bus := os.Getenv("MEASURE_BUS_BIN")
	if bus == "" {
		var err error
		if bus, err = busBinary(); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("bus", func(t *testing.T) {
		measureBatchRSS(t, func(port int, dir string) *exec.Cmd {
			return exec.Command(bus, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
				"--http-port", "0", "--store-dir", dir, "--log-level", "warn")
		})
	})
	if ref := os.Getenv("MEASURE_NATS_SERVER_BIN"); ref != "" {
		t.Run("nats-server", func(t *testing.T) {
			measureBatchRSS(t, func(port int, dir string) *exec.Cmd {
				return exec.Command(ref, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", dir)
			})
		})
	}
}

func measureBatchRSS(t *testing.T, command func(port int, dir string) *exec.Cmd) {
	m := startMeasured(t, command)
	nc, js := m.nc, m.js
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"},
		AllowAtomicPublish: true, MaxBytes: 10 << 20}); err != nil {
		t.Fatal(err)
	}
	pid := m.pid
	before := rss(t, pid)
	start := time.Now()
	replies := map[string]int{}
	data := make([]byte, 1_000_000)
	for b := range 4 {
		for seq := 1; seq <= 250; seq++ {
			m := nats.NewMsg("b.x")
			m.Data = data
			m.Header.Set("Nats-Batch-Id", fmt.Sprintf("batch%d", b))
			m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(seq))
			r, err := nc.RequestMsg(m, 10*time.Second)
			switch {
			case err != nil:
				replies[err.Error()]++
			case len(r.Data) == 0:
				replies["empty"]++
			default:
				replies[string(r.Data)]++
			}
		}
	}
	staged := time.Since(start)
	after := rss(t, pid)
	time.Sleep(12 * time.Second) // the measurement: past the 10 s batch timeout
	later := rss(t, pid)
	t.Logf("RSS before %d MB, after 4×250×1 MB uncommitted %d MB (%.1fs), 12 s later %d MB, peak %d MB",
		before.rss>>20, after.rss>>20, staged.Seconds(), later.rss>>20, later.peak>>20)
	t.Logf("replies: %v", replies)
}

type procMem struct{ rss, peak int64 }

// rss reads VmRSS and VmHWM of process pid.
func rss(t *testing.T, pid int) procMem {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var m procMem
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb << 10
		case "VmHWM:":
			m.peak = kb << 10
		}
	}
	return m
}
