package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestAccountsConnectEventsMatchReference checks the system account's
// $SYS.ACCOUNT.<account>.CONNECT and .DISCONNECT events against the
// reference: a user of A connects, publishes and leaves, and the same
// events arrive, of the same shape, naming the account, the user and
// the traffic.
func TestAccountsConnectEventsMatchReference(t *testing.T) {
	t.Parallel()
	bus, ref := startAccountsSysPair(t)
	notServed := map[string]string{
		"server.cluster": "bus has no cluster", "server.feature_flags": "bus's envelopes carry flags only", "server.domain": "", "server.tags": "", "server.xkey": "",
		"client.server": "", "client.cluster": "", "client.alts": "", "client.jwt": "", "client.issuer_key": "",
		"client.name_tag": "", "client.tags": "", "client.client_id": "", "client.nonce": "", "client.reply": "",
	}
	docs := map[string][]map[string]any{}
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		admin := connectAs(t, url, "admin")
		sub, err := admin.SubscribeSync("$SYS.ACCOUNT.*.*")
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Flush(); err != nil {
			t.Fatal(err)
		}
		nc, err := nats.Connect(url, nats.UserInfo("a1", accountsPass), nats.Name("events"))
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Publish("x", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		nc.Close()
		var steps []string
		var got []map[string]any
		for len(got) < 2 {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("events: %v (so far %v)", err, steps)
			}
			var doc map[string]any
			if err := json.Unmarshal(m.Data, &doc); err != nil {
				t.Fatal(err)
			}
			if field(doc, "client.acc") != "A" {
				continue // the reference's other accounts' events, if any
			}
			got = append(got, doc)
			steps = append(steps, fmt.Sprintf("%s: type %v acc %v user %v name %v kind %v client_type %v sent %v/%v reason %v",
				m.Subject, field(doc, "type"), field(doc, "client.acc"), field(doc, "client.user"), field(doc, "client.name"),
				field(doc, "client.kind"), field(doc, "client.client_type"), field(doc, "sent.msgs"), field(doc, "sent.bytes"),
				field(doc, "reason")))
		}
		docs[url] = got
		return steps
	})
	b, r := docs[busURL(bus)], docs[ref.ClientURL()]
	for i := range b {
		sameShape(t, fmt.Sprintf("event %d", i), b[i], r[i], notServed)
	}
}
