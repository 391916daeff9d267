package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestDLQListAndRedrive: `bus dlq ls` shows the dead letters with where
// they came from and why; `bus dlq redrive` puts them back.
func TestDLQListAndRedrive(t *testing.T) {
	t.Parallel()
	url, js := startJetStreamBus(t)
	nc := js.Conn()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	jobs, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs.>"}})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.jobs"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := `{"stream_name":"JOBS","config":{"durable_name":"W","ack_policy":"explicit","x_bus_dead_letter_subject":"dlq.jobs"}}`
	if _, err := nc.Request("$JS.API.CONSUMER.CREATE.JOBS.W", []byte(cfg), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := js.Publish(ctx, fmt.Sprintf("jobs.%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := jobs.Consumer(ctx, "W")
	b, err := c.Fetch(3, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		_ = m.TermWithReason("bad input")
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		if i, err := dlq.Info(ctx); err == nil && i.State.Msgs == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dead letters did not arrive")
		}
		time.Sleep(20 * time.Millisecond)
	}

	p := runBus(t, nil, "dlq", "ls", "DLQ", "-s", url)
	out := p.stdout.String()
	if p.code != exitOK || !strings.Contains(out, "jobs.1") || !strings.Contains(out, "terminated: bad input") || !strings.Contains(out, "JOBS") {
		t.Fatalf("dlq ls: exit %d\n%s\n%s", p.code, out, p.stderr)
	}
	p = runBus(t, nil, "dlq", "redrive", "DLQ", "-s", url, "--rate", "200")
	if p.code != exitOK || !strings.Contains(p.stdout.String(), "redriven 3, failed 0") {
		t.Fatalf("dlq redrive: exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	if i, _ := dlq.Info(ctx); i.State.Msgs != 0 {
		t.Fatalf("DLQ still has %d", i.State.Msgs)
	}
	if i, _ := jobs.Info(ctx); i.State.Msgs != 6 {
		t.Fatalf("JOBS has %d, want 6", i.State.Msgs)
	}
	if p := runBus(t, nil, "dlq", "redrive", "NOPE", "-s", url); p.code != exitUsage || !strings.Contains(p.stderr.String(), "stream not found") {
		t.Fatalf("redrive of a missing stream: exit %d %s", p.code, p.stderr)
	}
	if p := runBus(t, nil, "dlq", "ls", "DLQ", "-s", "nats://127.0.0.1:1"); p.code != exitFailure {
		t.Fatalf("unreachable server: exit %d %s", p.code, p.stderr)
	}
}
