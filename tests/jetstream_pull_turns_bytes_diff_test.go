package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// pullTurnsBytesScenario: two pulls with byte budgets wait on one inbox,
// as nats.go's Consume leaves them (it pulls again before its last pull
// is done). The reference hands them the messages in turn, one each, as
// it does pulls on different inboxes; so four small messages use up both
// budgets a little, and a large message that fits a whole budget fits
// neither: both end with 409 Message Size Exceeds MaxBytes, each with
// the messages it had left, and the client must pull again. nats.go's
// TestPullConsumerConsume/with_max_messages_and_per_fetch_size_limit
// counts those pulls. Issue 28.
func pullTurnsBytesScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 20*time.Second)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TURNS", Subjects: []string{"turns.*"}})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	nc := connect(t, url)
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []int{10, 6} {
		body := fmt.Sprintf(`{"batch":%d,"max_bytes":1024,"expires":%d}`, batch, 10*time.Second)
		if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.TURNS.C", inbox, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(5*time.Second, func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumWaiting == 2
	}) {
		t.Fatal("the two pulls are not waiting")
	}
	var out []string
	read := func(n int) {
		for range n {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				out = append(out, "read: "+err.Error())
				return
			}
			if status := m.Header.Get("Status"); status != "" {
				out = append(out, fmt.Sprintf("status %s %s, pending messages %s", status, m.Header.Get("Description"), m.Header.Get("Nats-Pending-Messages")))
				continue
			}
			out = append(out, fmt.Sprintf("delivered %s (%d bytes)", m.Subject, len(m.Data)))
		}
	}
	for range 4 {
		if _, err := js.Publish(ctx, "turns.small", []byte("msg")); err != nil {
			t.Fatal(err)
		}
	}
	read(4)
	if _, err := js.Publish(ctx, "turns.large", make([]byte, 950)); err != nil {
		t.Fatal(err)
	}
	read(2)
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("waiting %d, pending %d", info.NumWaiting, info.NumPending))
	return out
}

func TestPullTurnsWithByteBudgetsMatchReference(t *testing.T) {
	t.Parallel()
	ref := pullTurnsBytesScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := pullTurnsBytesScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
