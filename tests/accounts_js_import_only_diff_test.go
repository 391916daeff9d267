package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// An account without JetStream that imports $JS.API.INFO from another
// account uses that account's JetStream: the reference gives it no
// JetStream API of its own, so what it does not import has no
// responders, where an account that imports nothing gets 503 "JetStream
// not enabled for account". nats.go's Bind of a pull consumer relies on
// it (TestJetStreamImportDirectOnly): a CONSUMER.INFO with no
// responders lets the bind go ahead on MSG.NEXT alone.
func TestAccountsJetStreamImportOnlyMatchesReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, `
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
jetstream { store_dir: "STORE" }
accounts {
  JS {
    jetstream: enabled
    users: [ {user: js, password: pw} ]
    exports [
      { service: "$JS.API.INFO" }
      { service: "$JS.API.CONSUMER.MSG.NEXT.ORDERS.d1", response: stream }
      { service: "$JS.ACK.ORDERS.*.>" }
    ]
  }
  U {
    users: [ {user: u, password: pw} ]
    imports [
      { service: { subject: "$JS.API.INFO", account: JS } }
      { service: { subject: "$JS.API.CONSUMER.MSG.NEXT.ORDERS.d1", account: JS } }
      { service: { subject: "$JS.ACK.ORDERS.*.>", account: JS } }
    ]
  }
  W { users: [ {user: w, password: pw} ] }
}
`)
	bothSides(t, "nats://"+p.busClient, "nats://"+p.refClient, func(t *testing.T, url string) []string {
		owner := connect(t, url, nats.UserInfo("js", "pw"))
		mgr, err := owner.JetStream()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mgr.AddStream(&nats.StreamConfig{Name: "ORDERS"}); err != nil {
			t.Fatal(err)
		}
		if _, err := mgr.AddConsumer("ORDERS", &nats.ConsumerConfig{Durable: "d1", AckPolicy: nats.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := mgr.Publish("ORDERS", []byte("order")); err != nil {
				t.Fatal(err)
			}
		}
		var steps []string
		ask := func(who string, nc *nats.Conn, subject string) {
			m, err := nc.Request(subject, nil, 2*time.Second)
			switch {
			case errors.Is(err, nats.ErrNoResponders):
				steps = append(steps, who+" "+subject+": no responders")
			case err != nil:
				steps = append(steps, who+" "+subject+": "+err.Error())
			default:
				steps = append(steps, who+" "+subject+": "+apiErrorOf(m.Data))
			}
		}
		u := connect(t, url, nats.UserInfo("u", "pw"))
		w := connect(t, url, nats.UserInfo("w", "pw"))
		for _, subject := range []string{"$JS.API.CONSUMER.INFO.ORDERS.d1", "$JS.API.STREAM.NAMES"} {
			ask("U", u, subject)
			ask("W", w, subject)
		}
		ask("W", w, "$JS.API.INFO")
		js, err := u.JetStream(nats.MaxWait(2 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		sub, err := js.PullSubscribe("ORDERS", "d1", nats.Bind("ORDERS", "d1"))
		if err != nil {
			steps = append(steps, "U binds d1: "+err.Error())
			return steps
		}
		msgs, err := sub.Fetch(3)
		steps = append(steps, "U binds d1 and fetches: "+errText(err))
		steps = append(steps, fmt.Sprintf("fetched %d", len(msgs)))
		t.Log(lines(steps...))
		return steps
	})
}
