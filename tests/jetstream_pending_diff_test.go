package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
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

// Nats-Rollup replaces the older messages of its subject ("sub") or of
// the stream ("all") on a stream that allows it, and is refused with the
// reference's error on one that does not (issue 13: it was ignored).
func TestRollupMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	outcome := map[string]string{}
	for name, url := range map[string]string{"bus": busURL(bus), "reference": "nats://" + refAddr(ref)} {
		nc := connect(t, url)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t)
		var out strings.Builder
		for _, allow := range []bool{false, true} {
			sname := fmt.Sprintf("R%v", allow)
			st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: sname, Subjects: []string{sname + ".>"}, AllowRollup: allow})
			if err != nil {
				t.Fatal(err)
			}
			for _, subj := range []string{".a", ".b", ".a", ".b"} {
				if _, err := js.Publish(ctx, sname+subj, []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			for _, rollup := range []string{"sub", "bogus", "all"} {
				msg := nats.NewMsg(sname + ".a")
				msg.Header.Set("Nats-Rollup", rollup)
				_, err := js.PublishMsg(ctx, msg)
				info, ierr := st.Info(ctx)
				if ierr != nil {
					t.Fatal(ierr)
				}
				var apiErr *jetstream.APIError
				code := 0
				if errors.As(err, &apiErr) {
					code = int(apiErr.ErrorCode)
				}
				fmt.Fprintf(&out, "allow=%v rollup=%s err=%d msgs=%d; ", allow, rollup, code, info.State.Msgs)
			}
		}
		outcome[name] = out.String()
	}
	if outcome["bus"] != outcome["reference"] {
		t.Fatalf("rollups:\n  bus: %s\n  ref: %s", outcome["bus"], outcome["reference"])
	}
}
