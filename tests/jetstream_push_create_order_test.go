package tests

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// pushCreateOrderScenario creates push consumers on a stream that already
// holds messages, and reads, on one plain connection subscribed to both,
// whether the create's reply or a delivery came first. nats.go's
// js.Subscribe waits for the reply while its callback already runs, and
// TestJetStreamSubscribeContextCancel's callback cancels that wait's
// context after 50 messages.
func pushCreateOrderScenario(t *testing.T, url, addr string) []string {
	nc := connect(t, url)
	mustRequest(t, nc, "$JS.API.STREAM.CREATE.ORDER", `{"name":"ORDER","subjects":["order.>"],"storage":"memory"}`)
	for i := range 50 {
		if _, err := nc.Request("order.x", []byte(fmt.Sprint(i)), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	rc := dialRaw(t, addr)
	rc.send("CONNECT {\"verbose\":false,\"headers\":true,\"protocol\":1}\r\nPING\r\n")
	rc.expect("PONG\r\n")
	var out []string
	for i := range 20 {
		deliver, reply := fmt.Sprintf("_INBOX.order%d.deliver", i), fmt.Sprintf("_INBOX.order%d.reply", i)
		body := fmt.Sprintf(`{"stream_name":"ORDER","config":{"deliver_subject":"%s","ack_policy":"none"}}`, deliver)
		rc.send(fmt.Sprintf("SUB %s %d\r\nSUB %s %d\r\nPUB $JS.API.CONSUMER.CREATE.ORDER %s %d\r\n%s\r\n",
			deliver, 2*i+1, reply, 2*i+2, reply, len(body), body))
		var order []string
		for len(order) < 3 {
			f := strings.Fields(rc.line())
			switch {
			case len(f) == 1 && f[0] == "PING":
				rc.send("PONG\r\n")
				continue
			case len(f) == 2 && f[0] == "INFO": // the reference's after the first PONG
				continue
			case len(f) < 4 || (f[0] != "MSG" && f[0] != "HMSG"):
				t.Fatalf("consumer %d: unexpected %q", i, f)
			}
			size, err := strconv.Atoi(f[len(f)-1])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(rc.r, make([]byte, size+2)); err != nil {
				t.Fatal(err)
			}
			switch f[2] { // by sid: a delivery's subject is the message's
			case strconv.Itoa(2*i + 1):
				order = append(order, "delivery")
			case strconv.Itoa(2*i + 2):
				order = append(order, "reply")
			default: // an earlier consumer's, sent before its UNSUB arrived
			}
		}
		out = append(out, fmt.Sprintf("consumer %d: %s", i, strings.Join(order, " ")))
		rc.send(fmt.Sprintf("UNSUB %d\r\nUNSUB %d\r\n", 2*i+1, 2*i+2))
	}
	return out
}

// TestPushConsumerCreateAnsweredBeforeDeliveries: every one of bus's
// push consumers answers its create before it delivers. The reference
// does not promise it: it answers first most times, and on this machine
// 1 to 3 of 20 of its consumers delivered first (the scenario logs its
// order), which is how nats.go's TestJetStreamSubscribeContextCancel can
// fail against either server; bus holds a consumer back until its reply
// is sent (createConsumerAnswered). Issue 28.
func TestPushConsumerCreateAnsweredBeforeDeliveries(t *testing.T) {
	t.Parallel()
	ref := startReference(t, true)
	t.Logf("reference: %q", pushCreateOrderScenario(t, "nats://"+refAddr(ref), refAddr(ref)))
	bus := startBus(t, server.Options{JetStream: true})
	for i, got := range pushCreateOrderScenario(t, busURL(bus), bus.Addr().String()) {
		if want := fmt.Sprintf("consumer %d: reply delivery delivery", i); got != want {
			t.Errorf("bus %s, want %s", got, want)
		}
	}
}
