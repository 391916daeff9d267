package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// flowStalledScenario is nats.go's TestJetStreamFlowControlStalled seen
// from the wire: a push consumer with flow control whose client never
// answers a flow-control request. Its idle heartbeats then carry
// Nats-Consumer-Stalled, the request's reply subject, and an answer
// there lets delivery go on. Issue 28, item 5.
func flowStalledScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	must(t, err)
	_, err = js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"a"}})
	must(t, err)
	ds, err := nc.SubscribeSync("ds")
	must(t, err)
	must(t, ds.SetPendingLimits(-1, -1))
	_, err = js.AddConsumer("TEST", &nats.ConsumerConfig{Durable: "dur", DeliverSubject: "ds", AckPolicy: nats.AckNonePolicy,
		FlowControl: true, Heartbeat: 200 * time.Millisecond})
	must(t, err)
	payload := make([]byte, 100*1024)
	for range 250 {
		must(t, nc.Publish("a", payload))
	}
	var out []string
	var fcReply, stalled string
	delivered := 0
	deadline := time.Now().Add(10 * time.Second)
	for stalled == "" && time.Now().Before(deadline) {
		m, err := ds.NextMsg(2 * time.Second)
		if errors.Is(err, nats.ErrTimeout) {
			break
		}
		must(t, err)
		switch {
		case m.Header.Get("Status") == "100" && m.Reply != "":
			if fcReply == "" {
				fcReply = m.Reply // not answered: the client stalls
			}
		case m.Header.Get("Status") == "100":
			stalled = m.Header.Get("Nats-Consumer-Stalled")
		default:
			delivered++
		}
	}
	out = append(out, fmt.Sprintf("flow-control request: %v", fcReply != ""))
	out = append(out, fmt.Sprintf("heartbeat names the request: %v", stalled != "" && stalled == fcReply))
	out = append(out, fmt.Sprintf("stalled before all: %v", delivered < 250))
	if stalled == "" {
		return out
	}
	must(t, nc.Publish(stalled, nil))
	// Answering the stalled request lets the rest through (answering
	// each new request as it comes).
	for delivered < 250 {
		m, err := ds.NextMsg(5 * time.Second)
		if err != nil {
			out = append(out, fmt.Sprintf("after the answer: %d delivered, %v", delivered, err))
			return out
		}
		if m.Header.Get("Status") == "100" {
			if m.Reply != "" {
				must(t, m.Respond(nil))
			}
			continue
		}
		delivered++
	}
	out = append(out, fmt.Sprintf("after the answer: %d delivered", delivered))
	return out
}

func TestJetStreamFlowControlStalledMatchesReference(t *testing.T) {
	t.Parallel()
	want := flowStalledScenario(t, startReference(t, true).ClientURL())
	got := flowStalledScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, want, got)
}

// orderedSlowScenario is nats.go's TestJetStreamOrderedConsumerSlowConsumer
// (SubscribeSync, heartbeat recovery): an ordered consumer whose pending
// buffer overflowed is not recreated while the buffer is full, and is
// once the reader made room; it then reads every message in order.
func orderedSlowScenario(t *testing.T, url string) []string {
	const (
		total    = 200
		buffered = 32
		msgSize  = 8 * 1024
		hb       = 500 * time.Millisecond
	)
	nc := connect(t, url, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	js, err := nc.JetStream(nats.MaxWait(10 * time.Second))
	must(t, err)
	_, err = js.AddStream(&nats.StreamConfig{Name: "OSC", Subjects: []string{"osc.>"}})
	must(t, err)
	sub, err := js.SubscribeSync("osc.>", nats.OrderedConsumer(), nats.IdleHeartbeat(hb))
	must(t, err)
	defer func() { _ = sub.Unsubscribe() }()
	must(t, sub.SetPendingLimits(-1, buffered*msgSize))
	// Published once the limit is set (upstream publishes first, which
	// races the limit against the first deliveries): nothing reads, so
	// the buffer overflows.
	payload := make([]byte, msgSize)
	for range total {
		_, err := js.PublishAsync("osc.a", payload)
		must(t, err)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("publishes not acked")
	}
	eventually(t, 10*time.Second, func() bool { d, _ := sub.Dropped(); return d > 0 })
	var out []string
	read := func(from, to uint64) bool {
		for expected := from; expected <= to; {
			m, err := sub.NextMsg(3 * time.Second)
			if errors.Is(err, nats.ErrSlowConsumer) {
				continue
			}
			if err != nil {
				out = append(out, fmt.Sprintf("stalled waiting for %d: %v", expected, err))
				return false
			}
			md, err := m.Metadata()
			must(t, err)
			if md.Sequence.Stream != expected {
				out = append(out, fmt.Sprintf("skipped: want %d, got %d", expected, md.Sequence.Stream))
				return false
			}
			expected++
		}
		return true
	}
	name := func() string {
		ci, err := sub.ConsumerInfo()
		if err != nil {
			return err.Error()
		}
		return ci.Name
	}
	first := name()
	time.Sleep(3 * hb) // the upstream test's pacing: a reset must wait for room
	out = append(out, fmt.Sprintf("kept while full: %v", name() == first))
	if !read(1, buffered/2) {
		return out
	}
	recreated := waitFor(5*time.Second, func() bool { return name() != first })
	out = append(out, fmt.Sprintf("recreated after room: %v", recreated))
	out = append(out, fmt.Sprintf("read the rest in order: %v", read(buffered/2+1, total)))
	return out
}

func TestJetStreamOrderedSlowConsumerMatchesReference(t *testing.T) {
	t.Parallel()
	want := orderedSlowScenario(t, startReference(t, true).ClientURL())
	got := orderedSlowScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, want, got)
}
