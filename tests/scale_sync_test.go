package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestScaleSyncPublish measures a lone publisher that waits for each ack
// (issue #30): bus in its default durability (fdatasync before every ack)
// against the physical limit, one loopback round trip plus one fdatasync.
// The round trip is the reference's unsynced publish (nats-server, whose
// default syncs every two minutes), the fdatasync one of 64 bytes in bus's
// store directory; both run interleaved with bus's publishes, in rounds,
// so they see the same machine. It logs each one's mean and percentiles
// and bus's rate as a share of 1 / (round trip + mean fdatasync). A
// measurement, not a check:
//
//	MEASURE_SCALE=1 MEASURE_NATS_SERVER_BIN=/tmp/nats-server go test -count=1 -v -run TestScaleSyncPublish ./tests
//
// MEASURE_SCALE_ROUNDS (default 20) rounds of 250 each.
func TestScaleSyncPublish(t *testing.T) {
	if os.Getenv("MEASURE_SCALE") == "" {
		t.Skip("set MEASURE_SCALE=1 to measure")
	}
	servers := scaleServers(t)
	if len(servers) < 2 {
		t.Skip("set MEASURE_NATS_SERVER_BIN: the round trip is the reference's")
	}
	rounds := envInt(t, "MEASURE_SCALE_ROUNDS", 20)
	const perRound = 250
	busDir := t.TempDir()
	bus := startScaleServer(t, servers[0], busDir)
	ref := startScaleServer(t, servers[1], t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var jss []jetstream.JetStream
	for _, p := range []*scaleProc{bus, ref} {
		js := p.jetStream(t)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"sync.>"}}); err != nil {
			t.Fatal(err)
		}
		jss = append(jss, js)
	}
	probe, err := os.Create(filepath.Join(busDir, "fdatasync-probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	data := make([]byte, 64)
	var busLat, refLat, syncLat []time.Duration
	publish := func(js jetstream.JetStream, into *[]time.Duration) {
		for range perRound {
			start := time.Now()
			if _, err := js.Publish(ctx, "sync.x", data); err != nil {
				t.Fatal(err)
			}
			*into = append(*into, time.Since(start))
		}
	}
	for range rounds {
		publish(jss[1], &refLat)
		publish(jss[0], &busLat)
		for range perRound {
			start := time.Now()
			if _, err := probe.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Fdatasync(int(probe.Fd())); err != nil {
				t.Fatal(err)
			}
			syncLat = append(syncLat, time.Since(start))
		}
	}
	rtt, fsync, busMean := meanOf(refLat), meanOf(syncLat), meanOf(busLat)
	limit := 1 / (rtt + fsync).Seconds()
	t.Logf("reference unsynced publish (round trip): %s", latencySummary(refLat))
	t.Logf("fdatasync of 64 B in the store dir:      %s", latencySummary(syncLat))
	t.Logf("bus synced publish:                      %s", latencySummary(busLat))
	t.Logf("bus %.0f msgs/s, reference unsynced %.0f msgs/s, limit 1/(rtt+fdatasync) %.0f msgs/s: bus/limit %.2f, bus/reference %.2f",
		1/busMean.Seconds(), 1/rtt.Seconds(), limit, 1/busMean.Seconds()/limit, rtt.Seconds()/busMean.Seconds())
}

func meanOf(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func latencySummary(d []time.Duration) string {
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[int(float64(len(s)-1)*p)].Round(time.Microsecond) }
	return fmt.Sprintf("mean %v p50 %v p90 %v p99 %v max %v (n=%d)", meanOf(s).Round(time.Microsecond), at(.5), at(.9), at(.99), at(1), len(s))
}
