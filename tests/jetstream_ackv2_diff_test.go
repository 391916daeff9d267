package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// ackV2Scenario: with the reference's feature flag js_ack_fc_v2 on, a
// delivery's reply is $JS.ACK.<domain>.<account hash>.<stream>.<consumer>.…,
// nats.go reads its metadata, an ack in that form and one in the v1 form
// are both taken, and a flow-control request is $JS.FC.<domain>.<account
// hash>.<stream>.<consumer>.<id>.
func ackV2Scenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 30*time.Second)
	nc := connect(t, url)
	var out []string
	st, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}})
	out = append(out, o)
	for i := range 2 {
		if _, err := js.Publish(ctx, fmt.Sprintf("s.%d", i), []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	shape := func(subject string) string {
		tok := strings.Split(subject, ".")
		return fmt.Sprintf("%d tokens, %s", len(tok), strings.Join(tok[:min(len(tok), 6)], "."))
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []jetstream.Msg
	for m := range b.Messages() {
		msgs = append(msgs, m)
		meta, err := m.Metadata()
		if err != nil {
			out = append(out, "metadata: "+err.Error())
			continue
		}
		out = append(out, fmt.Sprintf("delivery %s: %s; stream %d consumer %d delivered %d pending %d domain %q",
			m.Subject(), shape(m.Reply()), meta.Sequence.Stream, meta.Sequence.Consumer, meta.NumDelivered, meta.NumPending, meta.Domain))
	}
	if len(msgs) != 2 {
		t.Fatalf("fetched %d", len(msgs))
	}
	if err := msgs[0].DoubleAck(ctx); err != nil {
		out = append(out, "v2 ack: "+err.Error())
	}
	// The second acked in the v1 form.
	meta, _ := msgs[1].Metadata()
	v1 := fmt.Sprintf("$JS.ACK.S.C.%d.%d.%d.%d.%d", meta.NumDelivered, meta.Sequence.Stream, meta.Sequence.Consumer, meta.Timestamp.UnixNano(), meta.NumPending)
	if _, err := nc.Request(v1, nil, 5*time.Second); err != nil {
		out = append(out, "v1 ack: "+err.Error())
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("after both acks: floor %d, ack pending %d", info.AckFloor.Stream, info.NumAckPending))

	// A flow-control request, from an ack policy flow_control consumer's
	// heartbeat with something pending.
	sub, err := nc.SubscribeSync("d.f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Request("$JS.API.CONSUMER.CREATE.S.F", []byte(`{"stream_name":"S","config":{"durable_name":"F","deliver_subject":"d.f","ack_policy":"flow_control"}}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			out = append(out, "flow control: "+err.Error())
			break
		}
		if m.Header.Get("Status") == "100" && m.Reply != "" {
			out = append(out, "flow-control request: "+shape(m.Reply))
			break
		}
		if m.Header.Get("Status") == "" {
			out = append(out, "push delivery: "+shape(m.Reply))
		}
	}
	return out
}

func TestAckFormatV2MatchesReference(t *testing.T) {
	t.Parallel()
	ref := startReferenceWith(t, func(o *natsserver.Options) {
		o.JetStream, o.StoreDir, o.JetStreamDomain = true, t.TempDir(), "hub"
		o.FeatureFlags = map[string]bool{"js_ack_fc_v2": true}
	})
	want := ackV2Scenario(t, ref.ClientURL())
	got := ackV2Scenario(t, busURL(startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub", JetStreamAckFormatV2: true})))
	sameOutcomes(t, want, got)
}
