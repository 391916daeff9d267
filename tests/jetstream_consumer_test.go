package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// seedStream creates stream S on "s.>" with messages s.a=1, s.b=2, s.a=3,
// s.c=4, s.b=5 (the payload is the sequence).
func seedStream(t *testing.T, js jetstream.JetStream, cfg jetstream.StreamConfig) jetstream.Stream {
	t.Helper()
	ctx := ctxT(t)
	if cfg.Name == "" {
		cfg.Name, cfg.Subjects = "S", []string{"s.>"}
	}
	st, err := js.CreateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, subj := range []string{"s.a", "s.b", "s.a", "s.c", "s.b"} {
		if _, err := js.Publish(ctx, subj, []byte(fmt.Sprint(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// fetchSeqs fetches up to n messages without waiting and returns their
// stream sequences, acking each.
func fetchSeqs(t *testing.T, c jetstream.Consumer, n int) []uint64 {
	t.Helper()
	b, err := c.FetchNoWait(n)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for m := range b.Messages() {
		md, _ := m.Metadata()
		seqs = append(seqs, md.Sequence.Stream)
		_ = m.Ack()
	}
	return seqs
}

func TestJetStreamDeliverPolicies(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{})
	start := time.Now()
	cases := []struct {
		name string
		cfg  jetstream.ConsumerConfig
		want string
	}{
		{"all", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}, "[1 2 3 4 5]"},
		{"last", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverLastPolicy}, "[5]"},
		{"new", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy}, "[]"},
		{"by start sequence", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 3}, "[3 4 5]"},
		{"by start time", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &start}, "[]"},
		{"last per subject", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy, FilterSubject: "s.>"}, "[3 4 5]"},
		{"filter", jetstream.ConsumerConfig{FilterSubject: "s.b"}, "[2 5]"},
		{"filters", jetstream.ConsumerConfig{FilterSubjects: []string{"s.a", "s.c"}}, "[1 3 4]"},
	}
	for i, tc := range cases {
		tc.cfg.Durable = fmt.Sprintf("P%d", i)
		tc.cfg.AckPolicy = jetstream.AckExplicitPolicy
		c, err := st.CreateOrUpdateConsumer(ctx, tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := fetchSeqs(t, c, 10)
		if s := fmt.Sprint(got); s != tc.want && !(tc.want == "[]" && got == nil) {
			t.Errorf("%s: got %v, want %s", tc.name, got, tc.want)
		}
	}
}

func TestJetStreamNakDelayTermAndInProgress(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{})
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "N", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 400 * time.Millisecond, FilterSubject: "s.a"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Fetch(2, jetstream.FetchMaxWait(2*time.Second))
	var msgs []jetstream.Msg
	for m := range b.Messages() {
		msgs = append(msgs, m)
	}
	if len(msgs) != 2 {
		t.Fatalf("fetched %d", len(msgs))
	}
	nakAt := time.Now()
	_ = msgs[0].NakWithDelay(300 * time.Millisecond) // seq 1 comes back after 300ms
	_ = msgs[1].Term()                               // seq 3 never comes back
	b2, _ := c.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
	for m := range b2.Messages() {
		md, _ := m.Metadata()
		if md.Sequence.Stream != 1 || md.NumDelivered != 2 {
			t.Fatalf("redelivered %+v", md.Sequence)
		}
		if time.Since(nakAt) < 250*time.Millisecond {
			t.Fatal("redelivered before the NAK delay")
		}
		// In progress keeps it from coming back while we work on it.
		for i := 0; i < 3; i++ {
			time.Sleep(200 * time.Millisecond) // the work being measured
			if err := m.InProgress(); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	info, _ := c.Info(ctx)
	if info.NumAckPending != 0 || info.NumRedelivered != 0 {
		t.Fatalf("after ack: %+v", info)
	}
	if got := fetchSeqs(t, c, 5); got != nil {
		t.Fatalf("terminated or in-progress message came back: %v", got)
	}
}

func TestJetStreamBackoffSchedule(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{})
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "B", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "s.c",
		BackOff: []time.Duration{100 * time.Millisecond, 400 * time.Millisecond}, MaxDeliver: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	for len(times) < 3 {
		b, err := c.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for range b.Messages() {
			times = append(times, time.Now()) // never acked
		}
	}
	if d := times[1].Sub(times[0]); d < 90*time.Millisecond {
		t.Fatalf("first redelivery after %v, back-off says 100ms", d)
	}
	if d := times[2].Sub(times[1]); d < 380*time.Millisecond {
		t.Fatalf("second redelivery after %v, back-off says 400ms", d)
	}
}

func TestJetStreamWorkQueueRemovesAcked(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{Name: "WQ", Subjects: []string{"s.>"}, Retention: jetstream.WorkQueuePolicy})
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Fetch(3, jetstream.FetchMaxWait(2*time.Second))
	for m := range b.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, func() bool {
		info, err := st.Info(ctx)
		return err == nil && info.State.Msgs == 2 && info.State.FirstSeq == 4
	})
}

func TestJetStreamOrderedConsumerAndDirectGet(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{Name: "O", Subjects: []string{"s.>"}, AllowDirect: true})
	oc, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 5 {
		b, err := oc.Fetch(5, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			got = append(got, string(m.Data()))
		}
		if err := b.Error(); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Fatalf("ordered consumer got %v", got)
	}
	// With allow_direct the client reads through DIRECT.GET.
	m, err := st.GetMsg(ctx, 4)
	if err != nil || string(m.Data) != "4" || m.Subject != "s.c" {
		t.Fatalf("direct get: %v %+v", err, m)
	}
	last, err := st.GetLastMsgForSubject(ctx, "s.b")
	if err != nil || last.Sequence != 5 {
		t.Fatalf("direct get last: %v %+v", err, last)
	}
	if _, err := st.GetMsg(ctx, 99); err == nil {
		t.Fatal("direct get of a missing seq succeeded")
	}
}

func TestJetStreamNakBackoffExtension(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	st := seedStream(t, js, jetstream.StreamConfig{})
	nc := connect(t, busURL(s))
	// A plain NAK follows the back-off schedule instead of redelivering
	// at once (bus's x_bus_nak_backoff).
	createConsumerRaw(t, nc, "S", "NB", `{"durable_name":"NB","ack_policy":"explicit","filter_subject":"s.c","backoff":[300000000,600000000],"max_deliver":5,"x_bus_nak_backoff":true,"x_bus_backoff_jitter":0.1}`)
	c, err := st.Consumer(context.Background(), "NB")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	for m := range b.Messages() {
		_ = m.Nak()
	}
	nakAt := time.Now()
	b2, _ := c.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
	n := 0
	for range b2.Messages() {
		n++
		if d := time.Since(nakAt); d < 250*time.Millisecond {
			t.Fatalf("NAK redelivered after %v; back-off (300ms ±10%%) should hold it", d)
		}
	}
	if n != 1 {
		t.Fatalf("redeliveries: %d", n)
	}
}

func TestJetStreamReplayOriginalKeepsTheGaps(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RP", Subjects: []string{"rp"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(150 * time.Millisecond) // the gap replay must reproduce
		}
		if _, err := js.Publish(ctx, "rp", nil); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "R", ReplayPolicy: jetstream.ReplayOriginalPolicy, AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b, err := c.Fetch(3, jetstream.FetchMaxWait(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range b.Messages() {
		n++
	}
	if n != 3 {
		t.Fatalf("got %d", n)
	}
	if d := time.Since(start); d < 280*time.Millisecond {
		t.Fatalf("replayed 3 messages stored 300ms apart in %v", d)
	}
}

func TestJetStreamHeadersOnly(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{})
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "H", HeadersOnly: true, FilterSubject: "s.c"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	m, ok := <-b.Messages()
	if !ok {
		t.Fatal("nothing delivered")
	}
	if len(m.Data()) != 0 || m.Headers().Get("Nats-Msg-Size") != "1" {
		t.Fatalf("headers-only delivery: data %q headers %v", m.Data(), m.Headers())
	}
}

func TestJetStreamInterestRetention(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"in"}, Retention: jetstream.InterestPolicy})
	if err != nil {
		t.Fatal(err)
	}
	// Nobody is interested yet: nothing is kept.
	if _, err := js.Publish(ctx, "in", []byte("lost")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { i, _ := st.Info(ctx); return i.State.Msgs == 0 })
	a, _ := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "A", AckPolicy: jetstream.AckExplicitPolicy})
	b, _ := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "B", AckPolicy: jetstream.AckExplicitPolicy})
	if _, err := js.Publish(ctx, "in", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	ackOne := func(c jetstream.Consumer) {
		bt, _ := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		for m := range bt.Messages() {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	ackOne(a)
	if i, _ := st.Info(ctx); i.State.Msgs != 1 {
		t.Fatalf("removed before every consumer acked: %+v", i.State)
	}
	ackOne(b)
	eventually(t, 5*time.Second, func() bool { i, _ := st.Info(ctx); return i.State.Msgs == 0 })
}

func TestJetStreamStreamUpdate(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{})
	if _, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>", "t.>"}, MaxMsgs: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t.new", []byte("6")); err != nil {
		t.Fatalf("publish to an added subject: %v", err)
	}
	info, _ := st.Info(ctx)
	if info.State.Msgs != 3 || info.State.LastSeq != 6 || info.Config.MaxMsgs != 3 {
		t.Fatalf("after update: %+v %+v", info.State, info.Config)
	}
	if _, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jetstream.MemoryStorage}); err == nil {
		t.Fatal("changing the storage type was accepted")
	}
	if _, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "NOPE"}); err == nil {
		t.Fatal("updating a missing stream was accepted")
	}
}

func TestJetStreamPullMaxBytesAndNextAck(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{})
	if _, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "MB", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	inbox := nats.NewInbox()
	sub, _ := nc.SubscribeSync(inbox)
	// Two messages fit the byte budget; the batch of 2 ends before it.
	if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.S.MB", inbox, []byte(`{"batch":2,"max_bytes":1000}`)); err != nil {
		t.Fatal(err)
	}
	var statuses []string
	var acks []string
	for len(statuses) == 0 {
		m, err := sub.NextMsg(2 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if st := m.Header.Get("Status"); st != "" {
			statuses = append(statuses, st+" "+m.Header.Get("Description"))
		} else {
			acks = append(acks, m.Reply)
		}
	}
	if len(acks) != 2 || statuses[0] != "409 Batch Completed" {
		t.Fatalf("got %d messages and %v", len(acks), statuses)
	}
	// +NXT acks one and pulls the next to the ack's reply subject.
	next := nats.NewInbox()
	nsub, _ := nc.SubscribeSync(next)
	if err := nc.PublishRequest(acks[0], next, []byte("+NXT")); err != nil {
		t.Fatal(err)
	}
	m, err := nsub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if md, err := m.Metadata(); err != nil || md.Sequence.Stream != 3 {
		t.Fatalf("+NXT delivered %v %v", md, err)
	}
}

func TestJetStreamMemoryStorage(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st := seedStream(t, js, jetstream.StreamConfig{Name: "MEM", Subjects: []string{"s.>"}, Storage: jetstream.MemoryStorage})
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "M", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if got := fetchSeqs(t, c, 10); fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Fatalf("memory stream delivered %v", got)
	}
	info, _ := st.Info(ctx)
	if info.Config.Storage != jetstream.MemoryStorage || info.State.Msgs != 5 {
		t.Fatalf("memory stream info %+v %+v", info.Config.Storage, info.State)
	}
}
