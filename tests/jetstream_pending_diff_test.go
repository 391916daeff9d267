package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A new last_per_subject consumer's lag is the number of subjects it
// will deliver, as on the reference (issue 13: bus said 0).
func TestLastPerSubjectPendingMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	for name, url := range map[string]string{"bus": busURL(bus), "reference": "nats://" + refAddr(ref)} {
		js, err := jetstream.New(connect(t, url))
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t)
		st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LPS", Subjects: []string{"lps.>"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"lps.a", "lps.a", "lps.b", "lps.c", "lps.b"} {
			if _, err := js.Publish(ctx, subj, []byte(subj)); err != nil {
				t.Fatal(err)
			}
		}
		c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "L", AckPolicy: jetstream.AckExplicitPolicy,
			DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy, FilterSubject: "lps.>"})
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumPending != 3 {
			t.Errorf("%s: num_pending %d of a new last_per_subject consumer over 3 subjects, want 3", name, info.NumPending)
		}
	}
}

// The pending count each delivery carries in its ack subject counts only
// what the consumer's filter matches, as on the reference (issue 13: bus
// counted the whole stream, so clients waiting for 0 waited forever).
func TestDeliveryPendingCountsTheFilterOnly(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	got := map[string][]uint64{}
	for name, url := range map[string]string{"bus": busURL(bus), "reference": "nats://" + refAddr(ref)} {
		js, err := jetstream.New(connect(t, url))
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t)
		st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PF", Subjects: []string{"pf.>"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"pf.a", "pf.b", "pf.a", "pf.b", "pf.a", "pf.b"} {
			if _, err := js.Publish(ctx, subj, []byte(subj)); err != nil {
				t.Fatal(err)
			}
		}
		c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "F", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "pf.a"})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			m, err := c.Next(jetstream.FetchMaxWait(2 * time.Second))
			if err != nil {
				t.Fatal(err)
			}
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			got[name] = append(got[name], meta.NumPending)
			_ = m.Ack()
		}
	}
	if fmt.Sprint(got["bus"]) != fmt.Sprint(got["reference"]) {
		t.Fatalf("pending counts: bus %v, reference %v", got["bus"], got["reference"])
	}
}
