package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The JetStream-across-imports scenario (issue 27; nats.go's
// TestJetStreamImportDirectOnly, TestKeyValueCrossAccounts and
// TestJetStreamCrossAccountMirrorsAndSources): account JS has the
// streams and exports deliver subjects, its API, its KV and its acks; U
// imports them, plainly, under a prefix and mapped, and has a JetStream
// of its own for an external mirror. u2 may subscribe to the deliver
// subjects and to orders.public only, for the stored-read rule.
const accountsJSImportsReferenceConfig = `
listen: 127.0.0.1:-1
jetstream { store_dir: %q }
accounts {
  JS {
    jetstream: enabled
    users: [ {user: js1, password: pw} ]
    exports [
      { stream: "p.plain" }
      { stream: "p.pre" }
      { stream: "p.to" }
      { stream: "kvw.>" }
      { stream: "RI.DELIVER.SYNC.>" }
      { service: "$JS.API.>" }
      { service: "$KV.>" }
      { service: "$JS.ACK.ORDERS.>" }
    ]
  }
  U {
    jetstream: enabled
    users: [
      {user: u1, password: pw}
      {user: u2, password: pw, permissions: { subscribe: ["p.>", "pre.>", "mine.>", "_INBOX.>", "orders.public"] } }
    ]
    imports [
      { stream: { account: JS, subject: "p.plain" } }
      { stream: { account: JS, subject: "p.pre" }, prefix: pre }
      { stream: { account: JS, subject: "p.to" }, to: "mine.to" }
      { stream: { account: JS, subject: "kvw.>" } }
      { stream: { account: JS, subject: "RI.DELIVER.SYNC.>" } }
      { service: { account: JS, subject: "$JS.API.>" }, to: "fromJS.>" }
      { service: { account: JS, subject: "$KV.>" }, to: "fromJS.$KV.>" }
      { service: { account: JS, subject: "$JS.ACK.ORDERS.>" } }
    ]
  }
}
`

func accountsJSImportsBusOptions(referenceStoredReads bool) server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	u2 := user("u2")
	u2.Permissions = &server.Permissions{Subscribe: &server.SubjectPermission{
		Allow: []string{"p.>", "pre.>", "mine.>", "_INBOX.>", "orders.public"}}}
	return server.Options{
		JetStream:     true,
		Authorization: server.Authorization{ReferenceStoredReads: referenceStoredReads},
		Accounts: []server.Account{
			{Name: "JS", Users: []server.User{user("js1")}, JetStream: &server.AccountJetStream{},
				Exports: server.Exports{
					Streams: []server.StreamExport{{Subject: "p.plain"}, {Subject: "p.pre"}, {Subject: "p.to"},
						{Subject: "kvw.>"}, {Subject: "RI.DELIVER.SYNC.>"}},
					Services: []server.ServiceExport{{Subject: "$JS.API.>"}, {Subject: "$KV.>"}, {Subject: "$JS.ACK.ORDERS.>"}},
				}},
			{Name: "U", Users: []server.User{user("u1"), u2}, JetStream: &server.AccountJetStream{},
				Imports: server.Imports{
					Streams: []server.StreamImport{
						{Account: "JS", Subject: "p.plain"},
						{Account: "JS", Subject: "p.pre", Prefix: "pre"},
						{Account: "JS", Subject: "p.to", To: "mine.to"},
						{Account: "JS", Subject: "kvw.>"},
						{Account: "JS", Subject: "RI.DELIVER.SYNC.>"},
					},
					Services: []server.ServiceImport{
						{Account: "JS", Subject: "$JS.API.>", To: "fromJS.>"},
						{Account: "JS", Subject: "$KV.>", To: "fromJS.$KV.>"},
						{Account: "JS", Subject: "$JS.ACK.ORDERS.>"},
					},
				}},
		},
	}
}

// legacyJS is nats.go's JetStream context on nc.
func legacyJS(t *testing.T, nc *nats.Conn, opts ...nats.JSOpt) nats.JetStreamContext {
	t.Helper()
	js, err := nc.JetStream(append([]nats.JSOpt{nats.MaxWait(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// jsImportsScenario is what U's users see of JS's stream through the
// imports: push deliveries (plain, prefixed, mapped), an ack across the
// ack import, KV watches on an imported inbox and an external mirror.
// Deliveries are reported by their data, and with showSubjects by their
// subject too: the reference shows the stored subject to one subscriber
// an imported deliver subject reaches, the first its sublist returns,
// and the deliver subject to the others (its processMsgResults swaps
// the two for an import's first subscriber and keeps the swap for the
// rest), so which of u1 and u2 sees what varies from run to run. bus
// shows every subscriber the stored subject, as the reference does to
// that first one and without an import.
func jsImportsScenario(t *testing.T, url string, showSubjects bool) []string {
	var steps []string
	ncJS := connectAs(t, url, "js1")
	js := legacyJS(t, ncJS)
	if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{"orders.public", "pub"}, {"orders.secret", "sec"}} {
		if _, err := js.Publish(p[0], []byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}

	// Push consumers delivering to the subjects U imports.
	deliveries := []struct{ durable, deliver, imported string }{
		{"plain", "p.plain", "p.plain"}, {"pre", "p.pre", "pre.p.pre"}, {"to", "p.to", "mine.to"},
	}
	users := []string{"u1", "u2"}
	conns := map[string]*nats.Conn{}
	subs := map[string]*nats.Subscription{}
	for _, u := range users {
		conns[u] = connectAs(t, url, u)
		for _, d := range deliveries {
			sub, err := conns[u].SubscribeSync(d.imported)
			if err != nil {
				t.Fatal(err)
			}
			subs[u+" "+d.imported] = sub
		}
		if err := conns[u].Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range deliveries {
		ack := nats.AckNonePolicy
		if d.durable == "plain" {
			ack = nats.AckExplicitPolicy
		}
		if _, err := js.AddConsumer("ORDERS", &nats.ConsumerConfig{Durable: d.durable, DeliverSubject: d.deliver, AckPolicy: ack}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range users {
		for _, d := range deliveries {
			sub := subs[u+" "+d.imported]
			var got []string
			for {
				m, err := sub.NextMsg(500 * time.Millisecond)
				if err != nil {
					break
				}
				if showSubjects {
					got = append(got, m.Subject+" "+string(m.Data))
				} else {
					got = append(got, string(m.Data))
				}
				if u == "u1" && d.durable == "plain" {
					// The ack crosses U's service import of $JS.ACK.ORDERS.>.
					got = append(got, fmt.Sprintf("ack: %v", m.AckSync(nats.AckWait(5*time.Second))))
				}
			}
			steps = append(steps, fmt.Sprintf("%s on %s: %s", u, d.imported, strings.Join(got, ", ")))
		}
	}
	info, err := js.ConsumerInfo("ORDERS", "plain")
	if err != nil {
		t.Fatal(err)
	}
	steps = append(steps, fmt.Sprintf("plain: delivered %d, ack pending %d, ack floor %d",
		info.Delivered.Stream, info.NumAckPending, info.AckFloor.Stream))

	// KV watches: U's watcher's inbox is under kvw, which U imports.
	kvJS, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "Map", History: 10})
	if err != nil {
		t.Fatal(err)
	}
	ncU := connectAs(t, url, "u1", nats.CustomInboxPrefix("kvw"))
	kvU, err := legacyJS(t, ncU, nats.APIPrefix("fromJS")).KeyValue("Map")
	if err != nil {
		t.Fatal(err)
	}
	watchers := map[string]nats.KeyWatcher{}
	for name, kv := range map[string]nats.KeyValue{"JS": kvJS, "U": kvU} {
		w, err := kv.Watch("map")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Stop() })
		watchers[name] = w
	}
	next := func(w nats.KeyWatcher) string {
		select {
		case e := <-w.Updates():
			if e == nil {
				return "initial values done"
			}
			return fmt.Sprintf("%s=%s rev %d", e.Key(), e.Value(), e.Revision())
		case <-time.After(2 * time.Second):
			return "no update"
		}
	}
	for _, name := range []string{"JS", "U"} {
		steps = append(steps, name+" watch: "+next(watchers[name]))
	}
	if _, err := kvU.Put("map", []byte("from-u")); err != nil {
		t.Fatal(err)
	}
	if _, err := kvJS.Put("map", []byte("from-js")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"JS", "U"} {
		steps = append(steps, name+" watch: "+next(watchers[name])+"; "+next(watchers[name]))
	}

	// An external mirror in U: its consumer is JS's, created through
	// fromJS, delivering under RI.DELIVER.SYNC, which U imports.
	jsU := legacyJS(t, conns["u1"])
	_, err = jsU.AddStream(&nats.StreamConfig{Name: "MIRROR", Mirror: &nats.StreamSource{Name: "ORDERS",
		External: &nats.ExternalStream{APIPrefix: "fromJS", DeliverPrefix: "RI.DELIVER.SYNC.MIRRORS"}}})
	if err != nil {
		t.Fatal(err)
	}
	var mirrored uint64
	waitFor(10*time.Second, func() bool {
		si, err := jsU.StreamInfo("MIRROR")
		if err == nil {
			mirrored = si.State.Msgs
		}
		return mirrored == 2
	})
	steps = append(steps, fmt.Sprintf("mirror: %d messages", mirrored))
	m, err := jsU.GetLastMsg("MIRROR", "orders.secret")
	if err != nil {
		t.Fatal(err)
	}
	steps = append(steps, fmt.Sprintf("mirror last orders.secret: %s", m.Data))
	return steps
}

// TestAccountsJetStreamDeliversIntoImporters checks, against the
// reference, that JetStream's deliveries reach an importing account:
// push consumers whose deliver subject another account imports (plain,
// prefixed, mapped), with their acks crossing back through a service
// import, KV watchers whose inbox is imported, and an external mirror
// through imported API and deliver subjects. Against the reference bus
// runs with reference_stored_reads; with bus's default rule, u2, who may
// not subscribe to orders.secret, does not get it through the import
// either, and every importing subscriber sees the stored subject.
func TestAccountsJetStreamDeliversIntoImporters(t *testing.T) {
	t.Parallel()
	bus := startBus(t, accountsJSImportsBusOptions(true))
	ref := startReferenceConfig(t, accountsJSImportsReferenceConfig)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		return jsImportsScenario(t, url, false)
	})

	t.Run("stored_read_rule", func(t *testing.T) {
		strict := startBus(t, accountsJSImportsBusOptions(false))
		steps := jsImportsScenario(t, busURL(strict), true)
		for _, step := range steps {
			if strings.HasPrefix(step, "u2 on ") && !strings.HasSuffix(step, ": orders.public pub") {
				t.Errorf("u2 should read orders.public only, not orders.secret, which it may not subscribe to: %s", step)
			}
			if strings.HasPrefix(step, "u1 on ") && !(strings.Contains(step, "orders.public pub") && strings.Contains(step, "orders.secret sec")) {
				t.Errorf("u1 should read both messages on their stored subjects: %s", step)
			}
		}
	})
}
