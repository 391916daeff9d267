package tests

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// queuePushScenario: ten js.QueueSubscribeSync members of one queue on
// one connection, made at once, share one push consumer with a
// deliver_group, and its messages are spread across them rather than all
// given to one (nats.go's TestJetStreamConcurrentQueueDurablePushConsumers).
// Issue 28, item 2.
func queuePushScenario(t *testing.T, url string, concurrent bool) []string {
	nc := connect(t, url)
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	_, err = js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"foo"}})
	out = append(out, fmt.Sprintf("add stream: %v", err))
	const members, total = 10, 200
	subs := make([]*nats.Subscription, members)
	errs := make([]error, members)
	var wg sync.WaitGroup
	for i := range members {
		subscribe := func() { subs[i], errs[i] = js.QueueSubscribeSync("foo", "bar") }
		if !concurrent {
			subscribe()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			subscribe()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			out = append(out, fmt.Sprintf("member %d: %v", i, err))
		}
	}
	si, err := js.StreamInfo("TEST")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("consumers %d", si.State.Consumers))
	for range total {
		if _, err := js.Publish("foo", []byte("hello")); err != nil {
			t.Fatal(err)
		}
	}
	got, busiest, served := 0, 0, 0
	waitFor(5*time.Second, func() bool {
		got, busiest, served = 0, 0, 0
		for _, sub := range subs {
			if sub == nil {
				continue
			}
			n, _, _ := sub.Pending()
			got += n
			busiest = max(busiest, n)
			if n > 0 {
				served++
			}
		}
		return got == total
	})
	out = append(out, fmt.Sprintf("received %d, by more than one member %v, none got all %v", got, served > 1, busiest < total))
	return out
}

func TestQueuePushMembersShareMatchesReference(t *testing.T) {
	t.Parallel()
	for _, concurrent := range []bool{false, true} {
		t.Run(fmt.Sprintf("concurrent=%v", concurrent), func(t *testing.T) {
			ref := queuePushScenario(t, "nats://"+refAddr(startReference(t, true)), concurrent)
			got := queuePushScenario(t, busURL(startBus(t, server.Options{JetStream: true})), concurrent)
			sameOutcomes(t, ref, got)
		})
	}
}
