package jetstream

import (
	"encoding/json"
	"testing"

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
