package monitor

import (
	"fmt"
	"testing"
	"time"
)

// metricsOf is a JetStream snapshot with consumers named "c<i>" on
// stream S, each with lag i*10+base.
func metricsOf(consumers int, base uint64) *JetStreamMetrics {
	st := StreamMetrics{Name: "S"}
	for i := range consumers {
		st.Consumers = append(st.Consumers, ConsumerMetrics{Name: fmt.Sprintf("c%d", i), NumPending: uint64(i)*10 + base})
	}
	return &JetStreamMetrics{Streams: []StreamMetrics{st}}
}

func TestLagRingKeepsTheLastSamples(t *testing.T) {
	t.Parallel()
	r := newLagRing(3, 10)
	t0 := time.UnixMilli(1_000_000)
	for i := range 5 {
		r.add(t0.Add(time.Duration(i)*time.Second), Counters{InMsgs: int64(i) * 100, OutMsgs: int64(i) * 50}, metricsOf(1, uint64(i)))
	}
	if n, series := r.len(); n != 3 || series != 1 {
		t.Fatalf("held %d samples, %d series; want 3, 1", n, series)
	}
	lag, untracked := r.since("S", 0)
	want := []lagPoint{{1_002_000, 2}, {1_003_000, 3}, {1_004_000, 4}}
	if got := lag["c0"]; fmt.Sprint(got) != fmt.Sprint(want) || untracked != 0 {
		t.Fatalf("lag %v (untracked %d), want %v", got, untracked, want)
	}
	// since leaves out what the page has.
	lag, _ = r.since("S", 1_003_000)
	if got := lag["c0"]; fmt.Sprint(got) != fmt.Sprint(want[2:]) {
		t.Fatalf("since: %v, want %v", got, want[2:])
	}
	if lag, _ := r.since("OTHER", 0); len(lag) != 0 {
		t.Fatalf("another stream's lag: %v", lag)
	}
	in, out := r.rates(0)
	if fmt.Sprint(in) != "[[1003000 100] [1004000 100]]" || fmt.Sprint(out) != "[[1003000 50] [1004000 50]]" {
		t.Fatalf("rates in %v out %v", in, out)
	}
}

func TestLagRingIsBounded(t *testing.T) {
	t.Parallel()
	const samples, maxSeries = 4, 5
	r := newLagRing(samples, maxSeries)
	t0 := time.UnixMilli(1_000_000)
	for i := range 3 * samples {
		r.add(t0.Add(time.Duration(i)*time.Second), Counters{}, metricsOf(8, 0))
	}
	n, series := r.len()
	if n != samples || series != maxSeries {
		t.Fatalf("held %d samples, %d series; want %d, %d", n, series, samples, maxSeries)
	}
	lag, untracked := r.since("S", 0)
	if untracked != 3 || len(lag) != maxSeries {
		t.Fatalf("%d series, %d untracked; want %d, 3", len(lag), untracked, maxSeries)
	}
	for name, pts := range lag {
		if len(pts) != samples {
			t.Errorf("%s: %d points, want %d", name, len(pts), samples)
		}
	}

	// A consumer that goes frees its room for a new one, whose history
	// starts when it came.
	r.add(t0.Add(time.Hour), Counters{}, metricsOf(2, 0))
	if _, series := r.len(); series != 2 {
		t.Fatalf("%d series after consumers went, want 2", series)
	}
	r.add(t0.Add(time.Hour+time.Second), Counters{}, metricsOf(3, 0))
	lag, _ = r.since("S", 0)
	if len(lag["c2"]) != 1 || len(lag["c0"]) != samples {
		t.Fatalf("new consumer has %d points, old one %d", len(lag["c2"]), len(lag["c0"]))
	}

	// Without JetStream only the traffic is sampled.
	r.add(t0.Add(2*time.Hour), Counters{}, nil)
	if _, series := r.len(); series != 0 {
		t.Fatalf("%d series without JetStream", series)
	}
}
