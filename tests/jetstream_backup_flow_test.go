package tests

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A snapshot sends at most window_size/chunk_size unacked chunks: a
// reader that does not ack holds it back (the server buffers no more),
// each ack lets one more chunk go, and a reader that stops acking ends
// it with the reference's 408 No Flow Response.
func TestJetStreamSnapshotFlowControl(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true})
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 64 {
		b := make([]byte, 4096)
		_, _ = rand.Read(b) // incompressible: about 256 KiB of snapshot
		if _, err := js.Publish(ctx, "orders.new", b); err != nil {
			t.Fatal(err)
		}
	}
	inbox := "snap.deliver"
	v := jsAPI(t, nc, "$JS.API.STREAM.SNAPSHOT.ORDERS", map[string]any{"deliver_subject": inbox, "chunk_size": 1024, "window_size": 4096})
	if v["error"] != nil {
		t.Fatal(v)
	}
	sub, err := nc.SubscribeSync(inbox) // after the response, as natscli does
	if err != nil {
		t.Fatal(err)
	}
	var held []*nats.Msg
	for range 4 {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("chunk %d: %v", len(held)+1, err)
		}
		if len(m.Data) != 1024 || m.Reply == "" {
			t.Fatalf("chunk of %d bytes, reply %q", len(m.Data), m.Reply)
		}
		held = append(held, m)
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("a fifth chunk (%d bytes) came with four unacked: the window is 4", len(m.Data))
	}
	if err := held[0].Respond(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("no chunk after an ack: %v", err)
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("two chunks (%d bytes) came for one ack", len(m.Data))
	}
	// Stop acking: the server gives up and says why.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("no end after the reader stalled: %v", err)
		}
		if len(m.Data) == 0 {
			if got := m.Header.Get("Status"); got != "408" || m.Header.Get("Description") != "No Flow Response" {
				t.Fatalf("end status %q %q, want 408 No Flow Response", got, m.Header.Get("Description"))
			}
			return
		}
	}
}
