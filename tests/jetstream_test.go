package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// startJS runs a bus with JetStream in a fresh store directory.
func startJS(t *testing.T) (*server.Server, jetstream.JetStream) {
	t.Helper()
	s := startBus(t, server.Options{JetStream: true})
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return s, js
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestJetStreamStreamLifecycle(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		ack, err := js.Publish(ctx, fmt.Sprintf("orders.%d", i), []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if ack.Stream != "ORDERS" || ack.Sequence != uint64(i) {
			t.Fatalf("ack %+v", ack)
		}
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 3 || info.State.FirstSeq != 1 || info.State.LastSeq != 3 {
		t.Fatalf("state %+v", info.State)
	}
	msg, err := s.GetMsg(ctx, 2)
	if err != nil || string(msg.Data) != "2" || msg.Subject != "orders.2" {
		t.Fatalf("get 2: %v %+v", err, msg)
	}
	last, err := s.GetLastMsgForSubject(ctx, "orders.3")
	if err != nil || last.Sequence != 3 {
		t.Fatalf("last for orders.3: %v %+v", err, last)
	}
	if _, err := s.GetMsg(ctx, 99); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	// Idempotent create, conflicting create, overlapping subjects.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatalf("same create again: %v", err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"other.>"}}); !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		t.Fatalf("conflicting create: %v", err)
	}
	var apiErr *jetstream.APIError
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OVERLAP", Subjects: []string{"orders.eu"}}); !errors.As(err, &apiErr) || apiErr.ErrorCode != 10065 {
		t.Fatalf("overlap: %v", err)
	}
	if err := s.DeleteMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeKeep(1)); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Info(ctx)
	if info.State.Msgs != 1 || info.State.LastSeq != 3 {
		t.Fatalf("after purge %+v", info.State)
	}
	names := js.StreamNames(ctx)
	var got []string
	for n := range names.Name() {
		got = append(got, n)
	}
	if len(got) != 1 || got[0] != "ORDERS" {
		t.Fatalf("names %v", got)
	}
	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Stream(ctx, "ORDERS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := js.Publish(ctx, "orders.1", nil, jetstream.WithRetryAttempts(0)); !errors.Is(err, jetstream.ErrNoStreamResponse) {
		t.Fatalf("publish without stream: %v", err)
	}
}

func TestJetStreamPublishDedupAndExpectations(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "D", Subjects: []string{"d.*"}}); err != nil {
		t.Fatal(err)
	}
	a1, err := js.Publish(ctx, "d.a", []byte("x"), jetstream.WithMsgID("id-1"))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := js.Publish(ctx, "d.a", []byte("x"), jetstream.WithMsgID("id-1"))
	if err != nil || !a2.Duplicate || a2.Sequence != a1.Sequence {
		t.Fatalf("dup: %v %+v", err, a2)
	}
	var apiErr *jetstream.APIError
	if _, err := js.Publish(ctx, "d.a", nil, jetstream.WithExpectLastSequence(99)); !errors.As(err, &apiErr) || apiErr.ErrorCode != 10071 {
		t.Fatalf("expect last seq: %v", err)
	}
	if _, err := js.Publish(ctx, "d.a", nil, jetstream.WithExpectLastSequence(1)); err != nil {
		t.Fatalf("expect right last seq: %v", err)
	}
	if _, err := js.Publish(ctx, "d.b", nil, jetstream.WithExpectLastSequencePerSubject(0)); err != nil {
		t.Fatalf("expect subject seq 0: %v", err)
	}
	if _, err := js.Publish(ctx, "d.b", nil, jetstream.WithExpectLastSequencePerSubject(1)); !errors.As(err, &apiErr) || apiErr.ErrorCode != 10071 {
		t.Fatalf("expect subject seq: %v", err)
	}
	if _, err := js.Publish(ctx, "d.a", nil, jetstream.WithExpectStream("OTHER")); !errors.As(err, &apiErr) || apiErr.ErrorCode != 10060 {
		t.Fatalf("expect stream: %v", err)
	}
	if _, err := js.Publish(ctx, "d.a", nil, jetstream.WithExpectLastMsgID("nope")); !errors.As(err, &apiErr) || apiErr.ErrorCode != 10070 {
		t.Fatalf("expect last msg id: %v", err)
	}
}

func TestJetStreamDiscardNew(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "L", Subjects: []string{"l"}, MaxMsgs: 2, Discard: jetstream.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := js.Publish(ctx, "l", nil); err != nil {
			t.Fatal(err)
		}
	}
	var apiErr *jetstream.APIError
	if _, err := js.Publish(ctx, "l", nil); !errors.As(err, &apiErr) || apiErr.ErrorCode != 10077 {
		t.Fatalf("third publish: %v", err)
	}
}

func TestJetStreamPullConsumerAckAndRedelivery(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "W", Subjects: []string{"w.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := js.Publish(ctx, "w.job", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(3, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []jetstream.Msg
	for m := range batch.Messages() {
		got = append(got, m)
	}
	if len(got) != 3 {
		t.Fatalf("fetched %d", len(got))
	}
	meta, err := got[0].Metadata()
	if err != nil || meta.Sequence.Stream != 1 || meta.Sequence.Consumer != 1 || meta.NumDelivered != 1 || meta.Stream != "W" || meta.Consumer != "D" {
		t.Fatalf("metadata %v %+v", err, meta)
	}
	_ = got[0].DoubleAck(ctx)
	_ = got[1].Ack()
	// got[2] is not acked: it comes back after the ack wait, not before.
	start := time.Now()
	var redelivered jetstream.Msg
	for redelivered == nil {
		b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			md, _ := m.Metadata()
			if md.Sequence.Stream == 3 {
				redelivered = m
			} else {
				_ = m.Ack()
			}
		}
	}
	md, _ := redelivered.Metadata()
	if md.NumDelivered != 2 {
		t.Fatalf("redelivery count %d", md.NumDelivered)
	}
	if elapsed := time.Since(start); elapsed < 250*time.Millisecond {
		t.Fatalf("redelivered after %v, before the ack wait", elapsed)
	}
	_ = redelivered.Ack()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Delivered.Stream != 5 || info.NumPending != 0 {
		t.Fatalf("info %+v", info)
	}
	// Non-destructive: a second durable replays from the start.
	c2, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "D2", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := c2.Fetch(5, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range b2.Messages() {
		n++
		_ = m.Ack()
	}
	if n != 5 {
		t.Fatalf("second durable got %d", n)
	}
	// An empty fetch with no_wait ends at once, without error.
	b3, err := c2.FetchNoWait(5)
	if err != nil {
		t.Fatal(err)
	}
	for range b3.Messages() {
		t.Fatal("unexpected message")
	}
	if b3.Error() != nil {
		t.Fatalf("no-wait fetch error: %v", b3.Error())
	}
}

func TestJetStreamMaxDeliverGoesToDeadLetterStream(t *testing.T) {
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
	adv, _ := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.JOBS.W")
	_ = nc.Flush()
	// The dead-letter subject is bus's own field, passed as extra JSON.
	createConsumerRaw(t, nc, "JOBS", "W", `{"durable_name":"W","ack_policy":"explicit","max_deliver":2,"x_bus_dead_letter_subject":"dlq.jobs"}`)
	if _, err := js.Publish(ctx, "jobs.poison", []byte("boom"), jetstream.WithMsgID("p1")); err != nil {
		t.Fatal(err)
	}
	c, err := st.Consumer(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			_ = m.Nak()
		}
	}
	if _, err := adv.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("no max-deliveries advisory: %v", err)
	}
	eventually(t, 5*time.Second, func() bool {
		i, err := dlq.Info(ctx)
		return err == nil && i.State.Msgs == 1
	})
	m, err := dlq.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "boom" || m.Header.Get("Bus-Dlq-Stream") != "JOBS" || m.Header.Get("Bus-Dlq-Sequence") != "1" ||
		m.Header.Get("Bus-Dlq-Reason") != "max_deliveries" || m.Header.Get("Bus-Dlq-Deliveries") != "2" || m.Header.Get("Bus-Dlq-Msg-Id") != "p1" {
		t.Fatalf("dead letter %q %v", m.Data, m.Header)
	}
	// Handed on to the dead-letter stream, it counts as acknowledged:
	// the floor passes it and it leaves the redelivered count (without a
	// dead-letter subject it would stay under the floor, as the
	// reference keeps it: TestMaxDeliverKeepsAckFloorMatchesReference).
	info, _ := c.Info(ctx)
	if info.NumAckPending != 0 || info.AckFloor.Stream != 1 || info.NumRedelivered != 0 {
		t.Fatalf("after dead-lettering: ack pending %d, floor %d, redelivered %d", info.NumAckPending, info.AckFloor.Stream, info.NumRedelivered)
	}
	// A terminated message goes to the dead-letter subject too, with the
	// client's reason.
	if _, err := js.Publish(ctx, "jobs.bad", []byte("malformed")); err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		if err := m.TermWithReason("cannot parse"); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, func() bool {
		i, err := dlq.Info(ctx)
		return err == nil && i.State.Msgs == 2
	})
	m2, err := dlq.GetMsg(ctx, 2)
	if err != nil || string(m2.Data) != "malformed" || m2.Header.Get("Bus-Dlq-Reason") != "terminated: cannot parse" {
		t.Fatalf("terminated dead letter %v %q %v", err, m2.Data, m2.Header)
	}
	// The count of dead-lettered messages is in consumer info.
	resp, err := nc.Request("$JS.API.CONSUMER.INFO.JOBS.W", nil, 2*time.Second)
	if err != nil || !strings.Contains(string(resp.Data), `"x_bus_dead_lettered":2`) {
		t.Fatalf("consumer info: %v %s", err, resp.Data)
	}
}

// createConsumerRaw creates a consumer from raw JSON config, as any
// client can to use bus's extension fields.
func createConsumerRaw(t *testing.T, nc *nats.Conn, stream, name, cfg string) {
	t.Helper()
	body := fmt.Sprintf(`{"stream_name":%q,"config":%s}`, stream, cfg)
	resp, err := nc.Request("$JS.API.CONSUMER.CREATE."+stream+"."+name, []byte(body), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Data) == "" || containsErr(resp.Data) {
		t.Fatalf("consumer create: %s", resp.Data)
	}
}

func containsErr(b []byte) bool { return len(b) > 0 && string(b) != "" && jsonHasKey(b, "error") }

func TestJetStreamMonitoring(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, HTTPPort: -1})
	nc := connect(t, busURL(s))
	js, _ := jetstream.New(nc)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "M", Subjects: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := js.Publish(ctx, "m", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "LAG", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	var jsz server.Jsz
	getJSON(t, "http://"+s.HTTPAddr().String()+"/jsz?consumers=true", &jsz)
	if jsz.Streams != 1 || jsz.Consumers != 1 || jsz.Messages != 5 || len(jsz.AccountDetails) != 1 || len(jsz.AccountDetails[0].Streams) != 1 {
		t.Fatalf("jsz %+v", jsz)
	}
	if c := jsz.AccountDetails[0].Streams[0].Consumers; len(c) != 1 || c[0].Name != "LAG" || c[0].NumPending != 5 {
		t.Fatalf("consumer detail %+v", c)
	}
	var varz map[string]any
	getJSON(t, "http://"+s.HTTPAddr().String()+"/varz", &varz)
	if _, ok := varz["jetstream"]; !ok {
		t.Fatal("varz lacks the jetstream section")
	}
	ai, err := js.AccountInfo(ctx)
	if err != nil || ai.Streams != 1 || ai.Consumers != 1 {
		t.Fatalf("account info %v %+v", err, ai)
	}
}
