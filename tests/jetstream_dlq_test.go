package tests

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A message two consumers give up on is two dead letters, even with the
// original's msg id inside the dead-letter stream's dedup window and
// with an expected-stream precondition that does not hold for the
// dead-letter stream (both used to lose the copy silently).
func TestDeadLettersAreNeverDuplicatesOrRefused(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs.>"}})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.jobs"}})
	if err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	for _, name := range []string{"A", "B"} {
		createConsumerRaw(t, nc, "JOBS", name, `{"durable_name":"`+name+`","ack_policy":"explicit","x_bus_dead_letter_subject":"dlq.jobs"}`)
	}
	if _, err := js.Publish(ctx, "jobs.x", []byte("poison"), jetstream.WithMsgID("m1"), jetstream.WithExpectStream("JOBS")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"A", "B"} {
		c, err := st.Consumer(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			if err := m.Term(); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, 5*time.Second, func() bool {
		i, err := dlq.Info(ctx)
		return err == nil && i.State.Msgs == 2
	})
	seen := map[string]bool{}
	for seq := uint64(1); seq <= 2; seq++ {
		m, err := dlq.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Bus-Dlq-Msg-Id") != "m1" || m.Header.Get("Nats-Expected-Stream") != "" {
			t.Fatalf("dead letter %d headers %v", seq, m.Header)
		}
		seen[m.Header.Get("Bus-Dlq-Consumer")] = true
	}
	if !seen["A"] || !seen["B"] {
		t.Fatalf("dead letters from %v, want A and B", seen)
	}
}

// A dead letter nothing stores is counted and reported, not lost
// silently: no stream captures its subject, or the dead-letter stream
// refuses it (full, discard new).
func TestLostDeadLettersAreCounted(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.full"}, MaxMsgs: 1, Discard: jetstream.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	createConsumerRaw(t, nc, "JOBS", "NOWHERE", `{"durable_name":"NOWHERE","ack_policy":"explicit","filter_subject":"jobs.a","x_bus_dead_letter_subject":"dlq.nobody"}`)
	createConsumerRaw(t, nc, "JOBS", "FULL", `{"durable_name":"FULL","ack_policy":"explicit","filter_subject":"jobs.b","x_bus_dead_letter_subject":"dlq.full"}`)
	for _, subj := range []string{"jobs.a", "jobs.b", "jobs.b"} {
		if _, err := js.Publish(ctx, subj, []byte("poison")); err != nil {
			t.Fatal(err)
		}
	}
	for name, n := range map[string]int{"NOWHERE": 1, "FULL": 2} {
		c, err := st.Consumer(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Fetch(n, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			if err := m.Term(); err != nil {
				t.Fatal(err)
			}
		}
	}
	lost := func(name string) int64 {
		resp, err := nc.Request("$JS.API.CONSUMER.INFO.JOBS."+name, nil, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			Lost int64 `json:"x_bus_dead_letters_lost"`
		}
		if err := json.Unmarshal(resp.Data, &info); err != nil {
			t.Fatal(err)
		}
		return info.Lost
	}
	eventually(t, 5*time.Second, func() bool { return lost("NOWHERE") == 1 && lost("FULL") == 1 })
}
