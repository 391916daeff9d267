package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// fetchBytesMsg is one stored message of the max_bytes scenario.
type fetchBytesMsg struct {
	subject string
	hdr     string // one header's value, "" for none (its key is K)
	size    int    // payload bytes
}

// Subjects of varied lengths, with and without a header, and payloads
// from empty to 100 bytes; twelve, so that the pending count in the ack
// reply goes from two digits to one within a fetch.
var fetchBytesMsgs = []fetchBytesMsg{
	{"s.a", "", 5}, {"s.bb.cc", "v1", 10}, {"s.long.subject.name.here", "", 0},
	{"s.d", "a longer header value", 3}, {"s.e", "", 100}, {"s.ff", "x", 1},
	{"s.g", "", 20}, {"s.h", "hv", 7}, {"s.i", "", 2}, {"s.j", "", 2}, {"s.k", "", 2}, {"s.l", "", 2},
}

// refPullSize is what the reference counts for message i (from 0) of a
// new consumer named by a 3-character name against a pull's max_bytes:
// subject, ack reply ($JS.ACK.S.<name>.<delivered>.<seq>.<consumer
// seq>.<19-digit ns>.<pending>), header and payload; with headersOnly
// the header gains Nats-Msg-Size and the payload is not sent.
func refPullSize(i int, headersOnly bool) int {
	m := fetchBytesMsgs[i]
	seq := fmt.Sprint(i + 1)
	reply := len("$JS.ACK.S.c00.1.") + 2*len(seq) + 2 + 19 + 1 + len(fmt.Sprint(len(fetchBytesMsgs)-i-1))
	hdr := 0
	if m.hdr != "" {
		hdr = len("NATS/1.0\r\n") + len("K: "+m.hdr+"\r\n") + 2
	}
	data := m.size
	if headersOnly {
		if hdr == 0 {
			hdr = len("NATS/1.0\r\n") + 2
		}
		hdr += len("Nats-Msg-Size: " + fmt.Sprint(m.size) + "\r\n")
		data = 0
	}
	return len(m.subject) + reply + hdr + data
}

// TestJetStreamFetchMaxBytesMatchesReference: a pull with max_bytes
// stops where the reference stops, at and around every boundary of the
// first messages, with and without headers_only, and ends with the
// reference's status and Nats-Pending-Messages/-Bytes: none when the
// budget is used up exactly, 409 Message Size Exceeds MaxBytes when the
// next message does not fit, 409 Batch Completed when the batch ran out
// first.
func TestJetStreamFetchMaxBytesMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	refOut := fetchBytesScenario(t, ref.ClientURL())
	sameOutcomes(t, refOut, fetchBytesScenario(t, busURL(bus)))
	// The sizes above are the reference's: at a boundary it takes the
	// message that fills the budget and says nothing more.
	for _, line := range refOut {
		if strings.Contains(line, "exact") && strings.Contains(line, "then") {
			t.Errorf("the reference does not count as refPullSize: %s", line)
		}
	}
}

func fetchBytesScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 20*time.Second)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range fetchBytesMsgs {
		msg := nats.NewMsg(m.subject)
		msg.Data = []byte(strings.Repeat("p", m.size))
		if m.hdr != "" {
			msg.Header.Set("K", m.hdr)
		}
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	nc := connect(t, url)
	var out []string
	n := 0
	fetch := func(headersOnly bool, batch, maxBytes int, what string) {
		t.Helper()
		name := fmt.Sprintf("c%02d", n)
		n++
		cons, err := js.CreateConsumer(ctx, "S", jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy, HeadersOnly: headersOnly})
		if err != nil {
			t.Fatal(err)
		}
		got := fetchBytes(ctx, t, nc, cons, batch, maxBytes)
		out = append(out, fmt.Sprintf("headers_only=%v batch=%d max_bytes=%d (%s): %s", headersOnly, batch, maxBytes, what, got))
	}
	for _, headersOnly := range []bool{false, true} {
		fetch(headersOnly, 100, 1, "less than one")
		total := 0
		for k := range 6 {
			total += refPullSize(k, headersOnly)
			fetch(headersOnly, 100, total-1, fmt.Sprintf("%d messages less 1", k+1))
			fetch(headersOnly, 100, total, fmt.Sprintf("%d messages exact", k+1))
			fetch(headersOnly, 100, total+1, fmt.Sprintf("%d messages and 1", k+1))
		}
		fetch(headersOnly, 2, total, "batch first")
		fetch(headersOnly, 3, refPullSize(0, headersOnly)+refPullSize(1, headersOnly)+refPullSize(2, headersOnly), "batch and bytes at once")
	}
	return out
}

// sentinelBatch marks the pull that fetchBytes sends once the one it
// tests is done: with max_bytes 1 it takes no message and is answered
// with 409 at once, after everything the tested pull got, so its status
// ends the collection without waiting for a timeout. It goes only once
// the consumer has no waiting pull: the reference serves waiting pulls
// in turn, a message each, and a no_wait pull behind another gets 408
// Requests Pending.
const sentinelBatch = 999999

// fetchBytes sends one no_wait pull with a byte budget and describes what
// comes back: the subjects delivered, then the status ending it, if any.
func fetchBytes(ctx context.Context, t *testing.T, nc *nats.Conn, cons jetstream.Consumer, batch, maxBytes int) string {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	next := "$JS.API.CONSUMER.MSG.NEXT.S." + cons.CachedInfo().Name
	pull := func(body string) {
		if err := nc.PublishRequest(next, inbox, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	pull(fmt.Sprintf(`{"batch":%d,"max_bytes":%d,"no_wait":true}`, batch, maxBytes))
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Done: not waiting any more, once it has been heard (it got a
		// message or its status); before, it may not be queued yet.
		if queued, _, _ := sub.Pending(); info.NumWaiting == 0 && (info.Delivered.Consumer > 0 || queued > 0) {
			break
		}
	}
	pull(fmt.Sprintf(`{"batch":%d,"max_bytes":1,"expires":5000000000}`, sentinelBatch))
	var got []string
	for {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			return strings.Join(got, " ") + " then " + err.Error()
		}
		status := m.Header.Get("Status")
		if status == "" {
			got = append(got, m.Subject)
			continue
		}
		pending := m.Header.Get("Nats-Pending-Messages") + "/" + m.Header.Get("Nats-Pending-Bytes")
		if pending == fmt.Sprint(sentinelBatch)+"/1" {
			return strings.Join(got, " ")
		}
		got = append(got, "then "+status+" "+m.Header.Get("Description")+" pending="+pending)
	}
}
