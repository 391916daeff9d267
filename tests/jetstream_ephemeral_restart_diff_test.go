package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ephemeralRestartScenario: ephemeral consumers of a file stream survive
// a restart of the server with their state, as the reference keeps them
// until their inactive threshold: a pull Consume and a push subscription
// running across the restart get what is published after it, one with
// mem_storage is gone, and a short inactive threshold still ends one
// that no one uses after the restart. restart stops the server and
// starts it again on the same address and store. Issue 28, item 1.
func ephemeralRestartScenario(t *testing.T, url string, restart func()) []string {
	nc := connect(t, url, nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []string
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "E", Subjects: []string{"e.>"}})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(subject string, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			var err error
			for range 250 { // until the client has reconnected
				if _, err = js.Publish(ctx, subject, []byte(fmt.Sprint(i))); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil {
				t.Fatalf("publish %s %d: %v", subject, i, err)
			}
		}
	}
	publish("e.pull", 0, 5)
	pull, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Name: "pull", AckPolicy: jetstream.AckExplicitPolicy,
		FilterSubject: "e.pull", InactiveThreshold: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Name: "short", FilterSubject: "e.pull", InactiveThreshold: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Name: "mem", MemoryStorage: true, InactiveThreshold: time.Minute}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 100)
	cc, err := pull.Consume(func(m jetstream.Msg) {
		if err := m.Ack(); err == nil {
			got <- string(m.Data())
		}
	}, jetstream.PullExpiry(time.Second), jetstream.PullHeartbeat(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	await := func(what string, n int) {
		t.Helper()
		var seen []string
		deadline := time.After(30 * time.Second)
		for len(seen) < n {
			select {
			case s := <-got:
				if !slices.Contains(seen, s) {
					seen = append(seen, s)
				}
			case <-deadline:
				t.Fatalf("%s: %d of %d messages consumed", what, len(seen), n)
			}
		}
		slices.Sort(seen)
		out = append(out, what+": "+strings.Join(seen, ","))
	}
	await("consumed before", 5)

	legacy, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	push, err := legacy.SubscribeSync("e.push", nats.InactiveThreshold(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	pushInfo, err := push.ConsumerInfo()
	if err != nil {
		t.Fatal(err)
	}
	publish("e.push", 0, 2)
	next := func(what string, n int) {
		t.Helper()
		var data []string
		for range n {
			m, err := push.NextMsg(30 * time.Second)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			data = append(data, string(m.Data))
			_ = m.Ack()
		}
		out = append(out, what+": "+strings.Join(data, ","))
	}
	next("push before", 2)
	// The acks above are sent; a flush makes sure the server has them
	// before it stops.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	restart()
	publish("e.pull", 5, 8)
	await("consumed after", 3)
	publish("e.push", 2, 4)
	next("push after", 2)

	names := func() string {
		var list []string
		lister := st.ConsumerNames(ctx)
		for n := range lister.Name() {
			if n == pushInfo.Name {
				n = "(push)"
			}
			list = append(list, n)
		}
		slices.Sort(list)
		return strings.Join(list, " ")
	}
	out = append(out, "consumers after the restart: "+names())
	for _, c := range []string{"pull", pushInfo.Name} {
		info, err := legacy.ConsumerInfo("E", c)
		if err != nil {
			out = append(out, fmt.Sprintf("consumer: %v", err))
			continue
		}
		out = append(out, fmt.Sprintf("durable %q push %v delivered %d/%d ack floor %d/%d pending %d ack pending %d inactive %v",
			info.Config.Durable, info.Config.DeliverSubject != "", info.Delivered.Consumer, info.Delivered.Stream, info.AckFloor.Consumer, info.AckFloor.Stream,
			info.NumPending, info.NumAckPending, info.Config.InactiveThreshold))
	}
	waitFor(20*time.Second, func() bool { return !strings.Contains(names(), "short") })
	out = append(out, "after the short threshold: "+names())
	return out
}

func TestEphemeralConsumersSurviveRestartMatchesReference(t *testing.T) {
	t.Parallel()
	sameAcrossRestart(t, ephemeralRestartScenario)
}

// An ephemeral consumer kept across a restart keeps its owner, as a
// durable one does (TestOwnerSurvivesRestart): restarted without the
// owner's rights to read the stream, it comes back suspended.
func TestEphemeralConsumerKeepsOwnerAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := func(feed bool) server.Options {
		allow := []string{"_INBOX.>"}
		if feed {
			allow = append(allow, "feed.>")
		}
		dave := server.User{Name: "dave", Password: "d", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "_INBOX.>"}},
			Subscribe: &server.SubjectPermission{Allow: allow},
		}}
		return server.Options{StoreDir: dir, JetStream: true, Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "a"}, dave}}}
	}
	first := startBus(t, opts(true))
	admin, daveJS := jsAs(t, first, "admin", "a"), jsAs(t, first, "dave", "d")
	ctx := ctxT(t)
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "FEED", Subjects: []string{"feed.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := daveJS.CreateConsumer(ctx, "FEED", jetstream.ConsumerConfig{Name: "EPH", InactiveThreshold: time.Minute}); err != nil {
		t.Fatal(err)
	}
	shutdown(t, first)

	s := startBus(t, opts(false))
	nc := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	if why := suspendedOf(t, nc, "$JS.API.CONSUMER.INFO.FEED.EPH"); !strings.Contains(why, `"dave"`) {
		t.Errorf("ephemeral EPH after a restart without dave's rights: x_bus_suspended %q", why)
	}
}
