package tests

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// refusedDeliveryScenario: what push consumers count when a delivery
// may not reach anyone (issue 28): eve may subscribe to anything but
// secret.>, and listens on the deliver subject of EVE, which holds
// secret.a and pub.b; nobody listens on NOBODY's. She acks the first
// message only, so the second is redelivered up to max_deliver.
//
// What the reference does: NOBODY delivers nothing and counts nothing.
// EVE delivers secret.a to eve's literal subscription: the reference
// does not hold a subscriber's deny list against the subject a stored
// message shows. Bus under reference_stored_reads does the same; bus's
// own rule is TestJetStreamRefusedPushDeliveryWaits. A wildcard
// subscription on the deliver subject is another matter:
// TestPushConsumerInterestIsTheLiteralDeliverSubject.
func refusedDeliveryScenario(t *testing.T, addr string) []string {
	user := func(name, pass string) string {
		return (&url.URL{Scheme: "nats", User: url.UserPassword(name, pass), Host: addr}).String()
	}
	admin, ctx := scenarioJS(t, user("admin", "a"), 20*time.Second)
	adminConn := connect(t, user("admin", "a"))
	_, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"secret.>", "pub.>"}})
	must(t, err)
	for _, subj := range []string{"secret.a", "pub.b"} {
		_, err := admin.Publish(ctx, subj, []byte(subj))
		must(t, err)
	}
	eve := connect(t, user("eve", "e"))
	got := make(chan *nats.Msg, 16)
	_, err = eve.ChanSubscribe("dlv.eve", got)
	must(t, err)
	must(t, eve.Flush())
	for _, cfg := range []jetstream.ConsumerConfig{
		{Durable: "EVE", DeliverSubject: "dlv.eve", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 500 * time.Millisecond, MaxDeliver: 2},
		{Durable: "NOBODY", DeliverSubject: "nobody", AckPolicy: jetstream.AckExplicitPolicy, AckWait: 500 * time.Millisecond, MaxDeliver: 2},
	} {
		_, err := admin.CreateOrUpdateConsumer(ctx, "S", cfg)
		must(t, err)
	}
	var out []string
	info := func(step, name string) {
		// By hand: nats.go's Consumer refuses push consumers.
		msg, err := adminConn.Request("$JS.API.CONSUMER.INFO.S."+name, nil, 5*time.Second)
		must(t, err)
		var ci jetstream.ConsumerInfo
		must(t, json.Unmarshal(msg.Data, &ci))
		out = append(out, fmt.Sprintf("%s %s: delivered=%d/%d ack_floor=%d ack_pending=%d redelivered=%d pending=%d",
			step, name, ci.Delivered.Consumer, ci.Delivered.Stream, ci.AckFloor.Stream, ci.NumAckPending, ci.NumRedelivered, ci.NumPending))
	}
	select {
	case m := <-got:
		out = append(out, "eve got "+m.Subject)
		must(t, m.AckSync()) // confirmed: the info after it counts it
	case <-time.After(5 * time.Second):
		info("none", "EVE")
		t.Fatalf("eve got nothing: %v", out)
	}
	info("first", "EVE")
	info("first", "NOBODY")
	// Past max_deliver's two ack waits, whatever is redelivered has been.
	time.Sleep(1500 * time.Millisecond)
	for len(got) > 0 {
		out = append(out, "eve then got "+(<-got).Subject)
	}
	info("later", "EVE")
	info("later", "NOBODY")
	return out
}

// Bus under reference_stored_reads, against the reference.
func TestJetStreamRefusedDeliveryMatchesReference(t *testing.T) {
	t.Parallel()
	ref := startReferenceWith(t, func(o *natsserver.Options) {
		o.JetStream, o.StoreDir = true, t.TempDir()
		o.Users = []*natsserver.User{{Username: "admin", Password: "a"}, {Username: "eve", Password: "e",
			Permissions: &natsserver.Permissions{Subscribe: &natsserver.SubjectPermission{Deny: []string{"secret.>"}}}}}
	})
	want := refusedDeliveryScenario(t, refAddr(ref))
	eve := server.User{Name: "eve", Password: "e", Permissions: &server.Permissions{
		Subscribe: &server.SubjectPermission{Deny: []string{"secret.>"}},
	}}
	s := startBus(t, server.Options{JetStream: true, Authorization: server.Authorization{ReferenceStoredReads: true, Users: []server.User{{Name: "admin", Password: "a"}, eve}}})
	got := refusedDeliveryScenario(t, s.Addr().String())
	sameOutcomes(t, want, got)
}
