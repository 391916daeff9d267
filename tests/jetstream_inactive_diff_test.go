package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// TestInactiveThresholdCountsFromPullEndMatchesReference: an ephemeral
// pull consumer's inactive_threshold counts from when its last pull
// ended or was last delivered to, not from when the pull arrived (issue
// 30: at 1 M subjects a pull whose read outlasted the 5 s default left
// the consumer deleted, and the client's next pull got no responders).
// With a threshold of 1 s, a pull that waits 3 s and expires, and one
// that waits 1.5 s before a message fills it, both leave the consumer
// there for at least half the threshold after; it goes once the
// threshold has passed since.
func TestInactiveThresholdCountsFromPullEndMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	bothSides(t, busURL(bus), ref.ClientURL(), inactiveAfterPullScenario)
}

func inactiveAfterPullScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, time.Minute)
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IDLE", Subjects: []string{"idle.>"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	exists := func(c jetstream.Consumer) bool {
		_, err := s.Consumer(ctx, c.CachedInfo().Name)
		return err == nil
	}
	// stays reports whether the consumer is there throughout the next
	// half threshold: a removal races the client's next request, so one
	// look right after could miss it.
	stays := func(c jetstream.Consumer) bool {
		for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if !exists(c) {
				return false
			}
		}
		return true
	}
	newConsumer := func() jetstream.Consumer {
		c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	fetch := func(c jetstream.Consumer) string {
		batch, err := c.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
		if err != nil {
			return "fetch: " + err.Error()
		}
		n := 0
		for range batch.Messages() {
			n++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Sprintf("fetch: %d messages, %v", n, err)
		}
		return fmt.Sprintf("fetch: %d messages", n)
	}

	// A pull that outwaits the threshold and expires.
	c := newConsumer()
	out = append(out, "expiring pull: "+fetch(c), fmt.Sprintf("for half the threshold after it expired the consumer stays: %v", stays(c)))
	out = append(out, fmt.Sprintf("then it goes: %v", waitFor(10*time.Second, func() bool { return !exists(c) })))

	// A pull that outwaits the threshold and is then filled.
	c = newConsumer()
	done := make(chan string)
	go func() { done <- fetch(c) }()
	// The pull must wait past the threshold before the message comes;
	// only time shows that, so this one waits on a timer.
	time.Sleep(1500 * time.Millisecond)
	if _, err := js.Publish(ctx, "idle.a", []byte("late")); err != nil {
		t.Fatal(err)
	}
	out = append(out, "filled pull: "+<-done, fmt.Sprintf("for half the threshold after the delivery the consumer stays: %v", stays(c)))
	out = append(out, fmt.Sprintf("then it goes: %v", waitFor(10*time.Second, func() bool { return !exists(c) })))
	return out
}

// TestInactiveThresholdWaitsForAckDeadlineMatchesReference: a pull
// consumer with acks pending is kept until its latest ack deadline plus
// inactive_threshold, as the reference keeps it, so a client that works
// on a batch for longer than the threshold can still ack it; acked, it
// goes a threshold later.
func TestInactiveThresholdWaitsForAckDeadlineMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	bothSides(t, busURL(bus), ref.ClientURL(), inactiveWithAckPendingScenario)
}

func inactiveWithAckPendingScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, time.Minute)
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "work.a", []byte("job")); err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 3 * time.Second, InactiveThreshold: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(1, jetstream.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for msg := range batch.Messages() {
		// The work outlasts the threshold, not the ack wait; only time
		// shows that, so this waits on a timer.
		time.Sleep(2 * time.Second)
		if err := msg.DoubleAck(ctx); err != nil {
			out = append(out, "ack after 2 s: "+err.Error())
		} else {
			out = append(out, "ack after 2 s: ok")
		}
	}
	name := c.CachedInfo().Name
	gone := waitFor(10*time.Second, func() bool { _, err := s.Consumer(ctx, name); return err != nil })
	return append(out, fmt.Sprintf("then it goes: %v", gone))
}

// TestInactiveThresholdUnheardPullMatchesReference: a waiting pull
// without expiry keeps an ephemeral consumer while its requester
// listens, and stops keeping it once the requester has gone, as the
// reference drops such a pull at its inactivity check.
func TestInactiveThresholdUnheardPullMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	bothSides(t, busURL(bus), ref.ClientURL(), unheardPullScenario)
}

func unheardPullScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, time.Minute)
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "GONE", Subjects: []string{"gone.>"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	name := c.CachedInfo().Name
	nc := connect(t, url)
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.GONE."+name, inbox, []byte(`{"batch":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	exists := func() bool { _, err := s.Consumer(ctx, name); return err == nil }
	// Twice the threshold: only time shows that the pull keeps it.
	stays := true
	for end := time.Now().Add(2 * time.Second); stays && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		stays = exists()
	}
	out := []string{fmt.Sprintf("a heard pull without expiry keeps it past the threshold: %v", stays)}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	return append(out, fmt.Sprintf("the requester gone, it goes: %v", waitFor(10*time.Second, func() bool { return !exists() })))
}
