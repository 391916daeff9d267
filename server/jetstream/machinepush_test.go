package jetstream

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// A push consumer with a long backlog hands it out one batch per step,
// asking for the next step at once, so that acks and pulls are heard in
// between.
func TestPushBacklogGoesOutOneBatchPerStep(t *testing.T) {
	t.Parallel()
	h := newHarness()
	for i := range 600 {
		h.src.msgs = append(h.src.msgs, jetlog.Msg{Seq: uint64(i + 1), Subject: "s.x", Data: []byte("m"), Time: h.now})
	}
	var cfg consumerConfig
	if err := json.Unmarshal([]byte(`{"durable_name":"P","deliver_subject":"d","ack_policy":"none"}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if e := cfg.normalize(streamConfig{Name: "S", Subjects: []string{"s.>"}}); e != nil {
		t.Fatal(e)
	}
	h.led = newMemLedger(jetlog.NewConsumerState(0, nil, h.clock))
	h.m = newMachine(machineConfig{stream: "S", cfg: cfg, src: h.src, ledger: h.led, now: h.now, start: 1, random: func() float64 { return 0.5 }})
	a := h.m.Stored(h.now)
	for _, want := range []struct {
		sent int
		more bool
	}{{pushBatch, true}, {pushBatch, true}, {600 - 2*pushBatch, false}} {
		if len(a.out) != want.sent || a.deadline.Equal(h.now) != want.more {
			t.Fatalf("step sent %d (want %d), next step at %v (want at once: %v)", len(a.out), want.sent, a.deadline, want.more)
		}
		a = h.m.Tick(h.now)
	}
	if len(a.out) != 0 || !a.deadline.IsZero() {
		t.Fatalf("after the backlog: %d sent, deadline %v", len(a.out), a.deadline)
	}
}

// A push consumer with rate_limit_bps delivers no faster than that: a
// burst of the stream's max_msg_size at once, then each message when the
// bucket holds its size again (subject, headers, payload: 50 bytes here,
// at 100 bytes a second).
func TestPushRateLimitPacesDeliveries(t *testing.T) {
	t.Parallel()
	h := newHarness()
	for i := range 6 {
		h.src.msgs = append(h.src.msgs, jetlog.Msg{Seq: uint64(i + 1), Subject: "s.x", Data: make([]byte, 47), Time: h.now})
	}
	var cfg consumerConfig
	if err := json.Unmarshal([]byte(`{"durable_name":"P","deliver_subject":"d","ack_policy":"none","rate_limit_bps":800}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if e := cfg.normalize(streamConfig{Name: "S", Subjects: []string{"s.>"}}); e != nil {
		t.Fatal(e)
	}
	h.led = newMemLedger(jetlog.NewConsumerState(0, nil, h.clock))
	h.m = newMachine(machineConfig{stream: "S", cfg: cfg, src: h.src, ledger: h.led, now: h.now, start: 1, maxMsgSize: 100, random: func() float64 { return 0.5 }})
	start := h.now
	a := h.m.Stored(h.now)
	for step, want := range []struct {
		sent int
		at   time.Duration // when the next step is asked for, from start
	}{{2, 500 * time.Millisecond}, {1, time.Second}, {1, 1500 * time.Millisecond}, {1, 2 * time.Second}, {1, 0}} {
		if len(a.out) != want.sent {
			t.Fatalf("step %d sent %d, want %d", step, len(a.out), want.sent)
		}
		if want.at == 0 {
			break
		}
		if !a.deadline.Equal(start.Add(want.at)) {
			t.Fatalf("step %d: next at %v, want %v", step, a.deadline.Sub(start), want.at)
		}
		h.now = a.deadline
		a = h.m.Tick(h.now)
	}
}
