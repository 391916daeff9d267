//go:build linux

package tests

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sys/unix"

	"github.com/bus-dev/bus/server"
)

// dropFromPageCache asks the kernel to forget the cached pages of the
// files in dir (ours only), so the verify reads them from the disk.
func dropFromPageCache(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) // best effort: a measurement aid
		_ = f.Close()
	}
}

// TestStoreVerifyMeasure fills a stream with MEASURE_VERIFY_MB (default
// 256) of incompressible 8 KiB messages, then verifies it online while
// another stream takes one synchronous publish every 5 ms, and logs the
// verify's time and rate, the heap it adds, and the publish latency
// beside a baseline taken before; with MEASURE_VERIFY_COLD=1 the
// stream's files are dropped from the page cache first, and with
// MEASURE_VERIFY_RATE_MB=N the verify reads at most N MiB a second. Slow: skipped unless MEASURE_VERIFY=1.
func TestStoreVerifyMeasure(t *testing.T) {
	if os.Getenv("MEASURE_VERIFY") == "" {
		t.Skip("MEASURE_VERIFY=1 to run")
	}
	mb := 256
	if v, err := strconv.Atoi(os.Getenv("MEASURE_VERIFY_MB")); err == nil && v > 0 {
		mb = v
	}
	store := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store})
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, name := range []string{"BIG", "PROBE"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}}); err != nil {
			t.Fatal(err)
		}
	}
	payload := make([]byte, 8<<10)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	fillStart := time.Now()
	n := mb << 10 >> 3
	for i := 0; i < n; i++ {
		if _, err := js.PublishAsync("BIG.x", payload); err != nil {
			t.Fatal(err)
		}
		if i%4096 == 4095 {
			<-js.PublishAsyncComplete()
		}
	}
	<-js.PublishAsyncComplete()
	t.Logf("filled %d MiB (%d messages) in %s", mb, n, time.Since(fillStart).Round(time.Millisecond))

	probe := func(stop <-chan struct{}) []time.Duration {
		var lat []time.Duration
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return lat
			case <-tick.C:
			}
			start := time.Now()
			if _, err := js.Publish(ctx, "PROBE.x", []byte("probe")); err != nil {
				t.Error(err)
				return lat
			}
			lat = append(lat, time.Since(start))
		}
	}
	stop := make(chan struct{})
	go func() { time.Sleep(3 * time.Second); close(stop) }() // the baseline's length, measured
	base := probe(stop)

	if os.Getenv("MEASURE_VERIFY_COLD") != "" {
		dropFromPageCache(t, filepath.Join(store, "jetstream", "BIG"))
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapBefore := ms.HeapInuse
	var peak uint64
	var wg sync.WaitGroup
	stop = make(chan struct{})
	wg.Add(2)
	var during []time.Duration
	go func() { defer wg.Done(); during = probe(stop) }()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}()
	vStart := time.Now()
	body := "{}"
	if v, err := strconv.Atoi(os.Getenv("MEASURE_VERIFY_RATE_MB")); err == nil && v > 0 {
		body = fmt.Sprintf(`{"max_bytes_per_second":%d}`, v<<20)
	}
	a := storeVerify(t, nc, "BIG", body)
	took := time.Since(vStart)
	close(stop)
	wg.Wait()
	if !a.OK {
		t.Fatalf("verify: %+v", a)
	}
	t.Logf("verify: %d segments, %d records, %d MiB in %s (%.0f MiB/s; server-side %s); heap +%d MiB at peak (%d MiB before)",
		a.Segments, a.Records, a.Bytes>>20, took.Round(time.Millisecond), float64(a.Bytes)/(1<<20)/took.Seconds(), a.Duration.Round(time.Millisecond),
		(max(peak, heapBefore)-heapBefore)>>20, heapBefore>>20)
	t.Logf("publish latency, baseline: %s", verifyLatencies(base))
	t.Logf("publish latency, during the verify: %s", verifyLatencies(during))
}

func verifyLatencies(l []time.Duration) string {
	if len(l) == 0 {
		return "no samples"
	}
	slices.Sort(l)
	at := func(q float64) time.Duration { return l[int(q*float64(len(l)-1))].Round(10 * time.Microsecond) }
	return strconv.Itoa(len(l)) + " publishes, p50 " + at(0.5).String() + ", p99 " + at(0.99).String() + ", max " + l[len(l)-1].Round(10*time.Microsecond).String()
}
