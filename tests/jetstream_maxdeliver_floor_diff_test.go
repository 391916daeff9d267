package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// maxDeliverFloorCase is one consumer shape of maxDeliverFloorScenario.
type maxDeliverFloorCase struct {
	name      string
	ack       jetstream.AckPolicy
	push      bool
	retention jetstream.RetentionPolicy
}

// maxDeliverFloorScenario: what a consumer reports about messages whose
// deliveries ran out (max_deliver 2) without an ack, as the reference
// counts them (issue 28): s.1 is acked, s.2 and s.3 are delivered twice
// and given up on; then s.4 and s.5 are delivered and only s.5 acked;
// the server restarts; s.4 comes again and is acked; the server
// restarts again; and a late ack reaches s.2, which had run out. Each step reports the consumer's
// delivered, ack floor, ack pending and redelivered counts, and the
// stream's message count.
func maxDeliverFloorScenario(t *testing.T, url string, restart func(), c maxDeliverFloorCase) []string {
	nc := connect(t, url, nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []string
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "M", Subjects: []string{"s.*"}, Retention: c.retention})
	must(t, err)
	publish := func(subjects ...string) {
		t.Helper()
		for _, subj := range subjects {
			var err error
			for range 250 { // until the client has reconnected
				if _, err = js.Publish(ctx, subj, []byte(subj)); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			must(t, err)
		}
	}
	cfg := jetstream.ConsumerConfig{Durable: "C", AckPolicy: c.ack, AckWait: 300 * time.Millisecond, MaxDeliver: 2}
	got := make(chan *nats.Msg, 64)
	if c.push {
		cfg.DeliverSubject = "dlv.c"
		_, err := nc.ChanSubscribe("dlv.c", got)
		must(t, err)
		must(t, nc.Flush())
	}
	cfgJSON, _ := json.Marshal(map[string]any{"stream_name": "M", "config": cfg})
	_, err = nc.Request("$JS.API.CONSUMER.DURABLE.CREATE.M.C", cfgJSON, 5*time.Second)
	must(t, err)
	var cons jetstream.Consumer
	if !c.push {
		cons, err = js.Consumer(ctx, "M", "C")
		must(t, err)
	}
	publish("s.1", "s.2", "s.3")
	// next waits for the next delivery, pulling for it when pull.
	next := func() *nats.Msg {
		t.Helper()
		if !c.push {
			for range 20 {
				batch, err := cons.Fetch(1, jetstream.FetchMaxWait(500*time.Millisecond))
				if err != nil {
					continue // reconnecting
				}
				for m := range batch.Messages() {
					// A pulled message is a jetstream.Msg; its
					// subject and reply are what the tests need.
					return &nats.Msg{Subject: m.Subject(), Reply: m.Reply(), Sub: &nats.Subscription{}}
				}
			}
			t.Fatal("nothing delivered")
		}
		select {
		case m := <-got:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("nothing delivered")
		}
		return nil
	}
	ack := func(m *nats.Msg) {
		t.Helper()
		must(t, nc.Publish(m.Reply, nil))
		must(t, nc.Flush())
	}
	info := func() jetstream.ConsumerInfo {
		t.Helper()
		var ci jetstream.ConsumerInfo
		for range 250 { // until the client has reconnected
			msg, err := nc.Request("$JS.API.CONSUMER.INFO.M.C", nil, 2*time.Second)
			if err == nil && json.Unmarshal(msg.Data, &ci) == nil && ci.Config.Durable == "C" {
				return ci
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("no consumer info")
		return ci
	}
	report := func(step string, ci jetstream.ConsumerInfo) {
		st, err := js.Stream(ctx, "M")
		must(t, err)
		// bus drops acked messages of interest and work-queue streams
		// after the ack step: read until the count holds still.
		var msgs uint64
		for same, last := 0, uint64(1<<63); same < 3; last = msgs {
			sInfo, err := st.Info(ctx)
			must(t, err)
			if msgs = sInfo.State.Msgs; msgs == last {
				same++
			} else {
				same = 0
			}
			time.Sleep(20 * time.Millisecond)
		}
		out = append(out, fmt.Sprintf("%s: delivered=%d/%d ack_floor=%d/%d ack_pending=%d redelivered=%d pending=%d msgs=%d",
			step, ci.Delivered.Consumer, ci.Delivered.Stream, ci.AckFloor.Consumer, ci.AckFloor.Stream,
			ci.NumAckPending, ci.NumRedelivered, ci.NumPending, msgs))
	}
	// waitFor polls the consumer's info until cond holds.
	waitFor := func(step string, cond func(jetstream.ConsumerInfo) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ci := info()
			if cond(ci) {
				report(step, ci)
				return
			}
			if time.Now().After(deadline) {
				report(step+" (timed out)", ci)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	deliveries := func(m *nats.Msg) string {
		md, err := m.Metadata()
		if err != nil {
			return m.Subject + " " + err.Error()
		}
		return fmt.Sprintf("%s #%d", m.Subject, md.NumDelivered)
	}

	var first []*nats.Msg
	for range 3 {
		first = append(first, next())
	}
	for _, m := range first {
		out = append(out, "got "+deliveries(m))
	}
	ack(first[0])
	for range 2 { // the redeliveries of s.2 and s.3
		out = append(out, "got "+deliveries(next()))
	}
	// The reference gives up on a pull consumer's message at its next
	// pull (bus at once): pull until it has.
	waitFor("ran out", func(ci jetstream.ConsumerInfo) bool {
		if ci.NumAckPending > 0 && !c.push {
			if batch, err := cons.FetchNoWait(1); err == nil {
				for m := range batch.Messages() {
					out = append(out, "unexpected "+m.Subject())
				}
			}
		}
		return ci.NumAckPending == 0
	})
	publish("s.4", "s.5")
	m4, m5 := next(), next()
	out = append(out, "got "+deliveries(m4), "got "+deliveries(m5))
	ack(m5)
	waitFor("acked s.5", func(ci jetstream.ConsumerInfo) bool {
		return c.ack == jetstream.AckAllPolicy && ci.NumAckPending == 0 || ci.NumAckPending == 1
	})
	restart()
	if c.ack == jetstream.AckAllPolicy {
		waitFor("restarted", func(jetstream.ConsumerInfo) bool { return true })
	} else {
		// After its redelivery: a push consumer redelivers s.4 as soon
		// as it is back.
		again := next()
		out = append(out, "got "+deliveries(again))
		waitFor("restarted", func(jetstream.ConsumerInfo) bool { return true })
		ack(again)
		waitFor("acked s.4", func(ci jetstream.ConsumerInfo) bool { return ci.NumAckPending == 0 })
	}
	// Nothing pending, the floor past s.2 and s.3: a restart keeps them
	// in an interest or work-queue stream, unacked.
	restart()
	waitFor("restarted again", func(jetstream.ConsumerInfo) bool { return true })
	ack(first[1]) // s.2, given up on
	// Explicit: the ack takes s.2 out of the redelivered count (acks are
	// applied after they are read: wait for it); all: it is below the
	// floor and changes nothing.
	waitFor("late ack of s.2", func(ci jetstream.ConsumerInfo) bool {
		return c.ack == jetstream.AckAllPolicy || ci.NumRedelivered == 1
	})
	return out
}

// TestMaxDeliverKeepsAckFloorMatchesReference: a message whose
// deliveries ran out stays under the ack floor and in the redelivered
// count, as the reference keeps it, for explicit and all ack policies,
// pull and push, and across a restart.
func TestMaxDeliverKeepsAckFloorMatchesReference(t *testing.T) {
	t.Parallel()
	for _, c := range []maxDeliverFloorCase{
		{name: "pull explicit", ack: jetstream.AckExplicitPolicy},
		{name: "push explicit", ack: jetstream.AckExplicitPolicy, push: true},
		{name: "pull all", ack: jetstream.AckAllPolicy},
		{name: "push all", ack: jetstream.AckAllPolicy, push: true},
		{name: "pull explicit interest", ack: jetstream.AckExplicitPolicy, retention: jetstream.InterestPolicy},
		{name: "pull explicit work queue", ack: jetstream.AckExplicitPolicy, retention: jetstream.WorkQueuePolicy},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sameAcrossRestart(t, func(t *testing.T, url string, restart func()) []string {
				return maxDeliverFloorScenario(t, url, restart, c)
			})
		})
	}
}
