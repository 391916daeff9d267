package tests

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestJetStreamPushConsumerWithFlowControlAndHeartbeats(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "P", Subjects: []string{"p.>"}})
	if err != nil {
		t.Fatal(err)
	}
	// Enough bytes to trip flow control at least once.
	payload := strings.Repeat("x", 64*1024)
	const msgs = 100
	for i := 0; i < msgs; i++ {
		js.PublishAsync("p.x", []byte(payload))
	}
	<-js.PublishAsyncComplete()
	pc, err := st.CreateOrUpdatePushConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "PUSH", DeliverSubject: "deliver.push", AckPolicy: jetstream.AckExplicitPolicy,
		FlowControl: true, IdleHeartbeat: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[uint64]bool{}
	done := make(chan struct{})
	cc, err := pc.Consume(func(m jetstream.Msg) {
		md, _ := m.Metadata()
		_ = m.Ack()
		mu.Lock()
		defer mu.Unlock()
		seen[md.Sequence.Stream] = true
		if len(seen) == msgs {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		mu.Lock()
		t.Fatalf("push consumer delivered %d of %d", len(seen), msgs)
	}
	// Pulling from a push consumer is refused like the reference does.
	nc := connect(t, strings.TrimSpace(js.Conn().ConnectedUrl()))
	resp, err := nc.Request("$JS.API.CONSUMER.MSG.NEXT.P.PUSH", []byte(`{"batch":1,"no_wait":true}`), 2*time.Second)
	if err != nil || resp.Header.Get("Status") != "409" {
		t.Fatalf("pull on push consumer: %v %v", err, resp)
	}
	// Deliver subjects inside the stream would loop.
	if _, err := st.CreateOrUpdatePushConsumer(ctx, jetstream.ConsumerConfig{Durable: "LOOP", DeliverSubject: "p.loop"}); err == nil {
		t.Fatal("a deliver subject inside the stream was accepted")
	}
}
