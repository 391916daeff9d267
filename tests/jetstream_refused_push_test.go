package tests

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// pushInfo is a push consumer's counters, asked by hand (nats.go's
// Consumer refuses push consumers).
func pushInfo(t *testing.T, nc *nats.Conn, stream, name string) string {
	t.Helper()
	msg, err := nc.Request("$JS.API.CONSUMER.INFO."+stream+"."+name, nil, 5*time.Second)
	must(t, err)
	var ci struct {
		jetstream.ConsumerInfo
		DeadLettered int64 `json:"x_bus_dead_lettered"`
	}
	must(t, json.Unmarshal(msg.Data, &ci))
	return fmt.Sprintf("delivered=%d/%d ack_floor=%d ack_pending=%d redelivered=%d pending=%d dead_lettered=%d",
		ci.Delivered.Consumer, ci.Delivered.Stream, ci.AckFloor.Stream, ci.NumAckPending, ci.NumRedelivered, ci.NumPending, ci.DeadLettered)
}

// TestJetStreamRefusedPushDeliveryWaits: under bus's stored-read rule
// (docs/security.md) a push delivery that no subscriber of the deliver
// subject may receive is not delivered nor counted, and spends no
// delivery: without a dead-letter subject the consumer waits at it, in
// order, until a subscriber that may receive it listens; with one, it
// is dead-lettered at once (Bus-Dlq-Reason refused) and the messages
// after it flow (issue 28).
func TestJetStreamRefusedPushDeliveryWaits(t *testing.T) {
	t.Parallel()
	eveUser := server.User{Name: "eve", Password: "e", Permissions: &server.Permissions{
		Subscribe: &server.SubjectPermission{Deny: []string{"secret.>"}},
	}}
	s := startBus(t, server.Options{JetStream: true, Authorization: server.Authorization{
		Users: []server.User{{Name: "admin", Password: "a"}, eveUser}}})
	user := func(name, pass string) string {
		return (&url.URL{Scheme: "nats", User: url.UserPassword(name, pass), Host: s.Addr().String()}).String()
	}
	admin, ctx := scenarioJS(t, user("admin", "a"), 20*time.Second)
	adminConn := connect(t, user("admin", "a"))
	_, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"secret.>", "pub.>"}})
	must(t, err)
	dlq, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.>"}})
	must(t, err)
	for _, subj := range []string{"secret.a", "pub.b"} {
		_, err := admin.Publish(ctx, subj, []byte(subj))
		must(t, err)
	}
	eve := connect(t, user("eve", "e"))
	toWait, toDead := make(chan *nats.Msg, 16), make(chan *nats.Msg, 16)
	_, err = eve.ChanSubscribe("dlv.wait", toWait)
	must(t, err)
	_, err = eve.ChanSubscribe("dlv.dead", toDead)
	must(t, err)
	must(t, eve.Flush())
	createConsumerRaw(t, adminConn, "S", "WAIT",
		`{"durable_name":"WAIT","deliver_subject":"dlv.wait","ack_policy":"explicit","ack_wait":300000000,"max_deliver":2}`)
	createConsumerRaw(t, adminConn, "S", "DEAD",
		`{"durable_name":"DEAD","deliver_subject":"dlv.dead","ack_policy":"explicit","ack_wait":300000000,"max_deliver":2,"x_bus_dead_letter_subject":"dlq.dead"}`)
	receive := func(ch chan *nats.Msg, who string) *nats.Msg {
		t.Helper()
		select {
		case m := <-ch:
			return m
		case <-time.After(5 * time.Second):
			t.Fatalf("%s got nothing", who)
			return nil
		}
	}

	// DEAD: secret.a goes to the dead-letter stream, eve gets pub.b.
	m := receive(toDead, "eve on dlv.dead")
	if m.Subject != "pub.b" {
		t.Fatalf("eve got %s on dlv.dead, want pub.b", m.Subject)
	}
	must(t, m.AckSync())
	eventually(t, 5*time.Second, func() bool {
		i, err := dlq.Info(ctx)
		return err == nil && i.State.Msgs == 1
	})
	dead, err := dlq.GetMsg(ctx, 1)
	must(t, err)
	if dead.Header.Get("Bus-Dlq-Subject") != "secret.a" || dead.Header.Get("Bus-Dlq-Reason") != "refused" || dead.Header.Get("Bus-Dlq-Deliveries") != "0" {
		t.Fatalf("dead letter %v", dead.Header)
	}
	if got, want := pushInfo(t, adminConn, "S", "DEAD"), "delivered=1/2 ack_floor=2 ack_pending=0 redelivered=0 pending=0 dead_lettered=1"; got != want {
		t.Errorf("DEAD: %s, want %s", got, want)
	}

	// WAIT: nothing delivered, nothing counted, past two ack waits (the
	// delay is what is checked: nothing happens in it).
	time.Sleep(700 * time.Millisecond)
	if len(toWait) > 0 {
		t.Fatalf("eve got %s on dlv.wait", (<-toWait).Subject)
	}
	if got, want := pushInfo(t, adminConn, "S", "WAIT"), "delivered=0/0 ack_floor=0 ack_pending=0 redelivered=0 pending=2 dead_lettered=0"; got != want {
		t.Errorf("WAIT while refused: %s, want %s", got, want)
	}
	// A subscriber that may receive secret.a: both go out, in order; eve
	// gets only pub.b.
	adminGot := make(chan *nats.Msg, 16)
	_, err = adminConn.ChanSubscribe("dlv.wait", adminGot)
	must(t, err)
	must(t, adminConn.Flush())
	var subjects []string
	for range 2 {
		m := receive(adminGot, "admin on dlv.wait")
		subjects = append(subjects, m.Subject)
		must(t, m.AckSync())
	}
	if !slices.Equal(subjects, []string{"secret.a", "pub.b"}) {
		t.Fatalf("admin got %v", subjects)
	}
	if m := receive(toWait, "eve on dlv.wait"); m.Subject != "pub.b" {
		t.Fatalf("eve got %s on dlv.wait", m.Subject)
	}
	if got, want := pushInfo(t, adminConn, "S", "WAIT"), "delivered=2/2 ack_floor=2 ack_pending=0 redelivered=0 pending=0 dead_lettered=0"; got != want {
		t.Errorf("WAIT after: %s, want %s", got, want)
	}
}

// literalInterestScenario: a push consumer whose deliver subject only a
// wildcard subscription matches. The reference counts as interest only
// a subscription on exactly the deliver subject (a push consumer
// registers for interest changes of that literal subject, and the check
// at registration compares each matching subscription's subject with
// it), so it delivers nothing, whatever permissions the subscriber has:
// that is why the wildcard ("dlv.*") variant of
// refusedDeliveryScenario delivered nothing. Once a literal
// subscription comes, it delivers, and the wildcard one gets the
// message too.
func literalInterestScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	js, ctx := scenarioJS(t, url, 20*time.Second)
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "L", Subjects: []string{"l.>"}})
	must(t, err)
	wild, literal := make(chan *nats.Msg, 4), make(chan *nats.Msg, 4)
	_, err = nc.ChanSubscribe("dlv.*", wild)
	must(t, err)
	must(t, nc.Flush())
	createConsumerRaw(t, nc, "L", "C", `{"durable_name":"C","deliver_subject":"dlv.c","ack_policy":"none"}`)
	_, err = js.Publish(ctx, "l.1", nil)
	must(t, err)
	var out []string
	wait := func(who string, ch chan *nats.Msg, d time.Duration) {
		select {
		case m := <-ch:
			out = append(out, who+" got "+m.Subject)
		case <-time.After(d):
			out = append(out, who+" got nothing")
		}
	}
	// Bounded: the reference never delivers here.
	wait("wildcard alone", wild, time.Second)
	out = append(out, "wildcard alone: "+pushInfo(t, nc, "L", "C"))
	_, err = nc.ChanSubscribe("dlv.c", literal)
	must(t, err)
	must(t, nc.Flush())
	wait("literal", literal, 2*time.Second)
	wait("wildcard", wild, 2*time.Second)
	out = append(out, "with literal: "+pushInfo(t, nc, "L", "C"))
	return out
}

// TestPushConsumerInterestIsTheLiteralDeliverSubject pins a deliberate
// difference: bus counts any subscription matching the deliver subject
// as interest, so a wildcard subscriber is delivered to at once.
func TestPushConsumerInterestIsTheLiteralDeliverSubject(t *testing.T) {
	t.Parallel()
	ref := literalInterestScenario(t, "nats://"+refAddr(startReference(t, true)))
	sameOutcomes(t, []string{
		"wildcard alone got nothing",
		"wildcard alone: delivered=0/0 ack_floor=0 ack_pending=0 redelivered=0 pending=1 dead_lettered=0",
		"literal got l.1",
		"wildcard got l.1",
		"with literal: delivered=1/1 ack_floor=1 ack_pending=0 redelivered=0 pending=0 dead_lettered=0",
	}, ref)
	got := literalInterestScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, []string{
		"wildcard alone got l.1",
		"wildcard alone: delivered=1/1 ack_floor=1 ack_pending=0 redelivered=0 pending=0 dead_lettered=0",
		"literal got nothing",
		"wildcard got nothing",
		"with literal: delivered=1/1 ack_floor=1 ack_pending=0 redelivered=0 pending=0 dead_lettered=0",
	}, got)
}
