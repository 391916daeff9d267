package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

func startJSAt(t *testing.T, dir string) *server.Server {
	t.Helper()
	s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: dir, JetStream: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJetStreamSurvivesRestartWithConsumerMidFlight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)

	first := startJSAt(t, dir)
	nc, err := nats.Connect(busURL(first))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "R", Subjects: []string{"r.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		if _, err := js.Publish(ctx, "r.x", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(4, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for m := range b.Messages() {
		i++
		if i <= 3 {
			if err := m.DoubleAck(ctx); err != nil { // confirmed durable
				t.Fatal(err)
			}
		} // seq 4 stays pending
	}
	nc.Close()
	shutdown(t, first)

	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	nc2 := connect(t, busURL(second))
	js2, _ := jetstream.New(nc2)
	st2, err := js2.Stream(ctx, "R")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st2.Info(ctx)
	if info.State.Msgs != 10 || info.State.LastSeq != 10 {
		t.Fatalf("stream after restart %+v", info.State)
	}
	c2, err := st2.Consumer(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := c2.Info(ctx)
	if ci.Delivered.Stream != 4 || ci.NumAckPending != 1 {
		t.Fatalf("consumer after restart: delivered %+v ack pending %d", ci.Delivered, ci.NumAckPending)
	}
	// Resumes with seq 5; seq 4 comes back once its ack wait is over.
	b2, err := c2.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b2.Messages() {
		md, _ := m.Metadata()
		if md.Sequence.Stream != 5 {
			t.Fatalf("resumed at stream seq %d, want 5", md.Sequence.Stream)
		}
	}
	if _, err := js2.Publish(ctx, "r.x", []byte("11")); err != nil {
		t.Fatal(err)
	}
	if info, _ := st2.Info(ctx); info.State.LastSeq != 11 {
		t.Fatalf("append after restart: %+v", info.State)
	}
}

func TestJetStreamEphemeralConsumerGoesAwayWhenInactive(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "E", Subjects: []string{"e"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{InactiveThreshold: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	name := c.CachedInfo().Name
	eventually(t, 5*time.Second, func() bool {
		_, err := st.Consumer(ctx, name)
		return err != nil
	})
}

func TestJetStreamConsumeKeepsWorkingAcrossIdleExpiries(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IDLE", Subjects: []string{"idle"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "I", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	errs := make(chan error, 10)
	cc, err := c.Consume(func(m jetstream.Msg) { _ = m.Ack(); got <- string(m.Data()) },
		jetstream.PullExpiry(time.Second), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	// Let several pulls expire (408) with heartbeats in between.
	time.Sleep(2500 * time.Millisecond) // the idle time is what is tested
	if _, err := js.Publish(ctx, "idle", []byte("late")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != "late" {
			t.Fatalf("got %q", m)
		}
	case err := <-errs:
		t.Fatalf("consume error: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("message published after idle pulls never arrived")
	}
}

// The expected-last-msg-id check and dedup keep working across a restart
// (the newest message's id is read on the first publish after it).
func TestJetStreamMsgIDsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)

	first := startJSAt(t, dir)
	nc := connect(t, busURL(first))
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "I", Subjects: []string{"i.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := js.Publish(ctx, "i.x", []byte("x"), jetstream.WithMsgID(fmt.Sprint("id-", i))); err != nil {
			t.Fatal(err)
		}
	}
	nc.Close()
	shutdown(t, first)

	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js2, _ := jetstream.New(connect(t, busURL(second)))
	if _, err := js2.Publish(ctx, "i.x", []byte("x"), jetstream.WithExpectLastMsgID("id-2")); err == nil {
		t.Fatal("a stale expected last msg id was accepted after the restart")
	}
	ack, err := js2.Publish(ctx, "i.x", []byte("x"), jetstream.WithExpectLastMsgID("id-3"), jetstream.WithMsgID("id-4"))
	if err != nil || ack.Sequence != 4 {
		t.Fatalf("publish expecting id-3: %+v, %v", ack, err)
	}
	dup, err := js2.Publish(ctx, "i.x", []byte("x"), jetstream.WithMsgID("id-2"))
	if err != nil || !dup.Duplicate || dup.Sequence != 2 {
		t.Fatalf("republished id-2: %+v, %v", dup, err)
	}
}
