package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The live reload scenario: before, A maps in.a to out.a and exports the
// stream news.> and the service svc.>, which B imports; the global
// account maps g.in to g.out. After, A maps in.a to out.b and new.a to
// new.b, no longer exports svc.> (B no longer imports it) but exports
// alerts.>, which B imports under the prefix fromA; the global account
// maps g.in to g.other.
const liveReloadBefore = `
listen: 127.0.0.1:-1
mappings { "g.in": "g.out" }
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    mappings { "in.a": "out.a" }
    exports [ {stream: "news.>"}, {service: "svc.>"} ]
  }
  B {
    users: [ {user: b1, password: pw} ]
    imports [ {stream: {account: A, subject: "news.>"}}, {service: {account: A, subject: "svc.>"}} ]
  }
}
authorization { users: [ {user: g, password: pw} ] }
# store: %q
`

const liveReloadAfter = `
listen: 127.0.0.1:-1
mappings { "g.in": "g.other" }
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    mappings { "in.a": "out.b", "new.a": "new.b" }
    exports [ {stream: "news.>"}, {stream: "alerts.>"} ]
  }
  B {
    users: [ {user: b1, password: pw} ]
    imports [ {stream: {account: A, subject: "news.>"}}, {stream: {account: A, subject: "alerts.>"}, prefix: fromA} ]
  }
}
authorization { users: [ {user: g, password: pw} ] }
# store: %q
`

func liveReloadOptions(after bool) server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	one := func(src, dest string) server.Mapping {
		return server.Mapping{Source: src, Destinations: []server.MapDestination{{Subject: dest, Weight: 100}}}
	}
	o := server.Options{Host: "127.0.0.1", Authorization: server.Authorization{Users: []server.User{user("g")}}}
	a := server.Account{Name: "A", Users: []server.User{user("a1")}}
	b := server.Account{Name: "B", Users: []server.User{user("b1")}}
	if !after {
		o.Mappings = []server.Mapping{one("g.in", "g.out")}
		a.Mappings = []server.Mapping{one("in.a", "out.a")}
		a.Exports = server.Exports{Streams: []server.StreamExport{{Subject: "news.>"}}, Services: []server.ServiceExport{{Subject: "svc.>"}}}
		b.Imports = server.Imports{Streams: []server.StreamImport{{Account: "A", Subject: "news.>"}},
			Services: []server.ServiceImport{{Account: "A", Subject: "svc.>"}}}
	} else {
		o.Mappings = []server.Mapping{one("g.in", "g.other")}
		a.Mappings = []server.Mapping{one("in.a", "out.b"), one("new.a", "new.b")}
		a.Exports = server.Exports{Streams: []server.StreamExport{{Subject: "news.>"}, {Subject: "alerts.>"}}}
		b.Imports = server.Imports{Streams: []server.StreamImport{{Account: "A", Subject: "news.>"}, {Account: "A", Subject: "alerts.>", Prefix: "fromA"}}}
	}
	o.Accounts = []server.Account{a, b}
	return o
}

// TestAccountsReloadAppliesMappingsAndSharesLive reloads mappings,
// exports and imports on bus and the reference alike, with the
// connections and subscriptions made before the reload kept: the next
// publish is routed by the new mappings (the global account's too), the
// removed service import answers no more, and the new prefixed stream
// import delivers to the subscription B made before it existed.
func TestAccountsReloadAppliesMappingsAndSharesLive(t *testing.T) {
	t.Parallel()
	opts := liveReloadOptions(false)
	opts.StoreDir = t.TempDir()
	bus := startBus(t, opts)
	ref, path := startReferenceFile(t, liveReloadBefore)
	reloads := map[string]func(t *testing.T){
		"bus": func(t *testing.T) {
			o := liveReloadOptions(true)
			o.StoreDir = opts.StoreDir
			if err := bus.Reload(o); err != nil {
				t.Fatal(err)
			}
		},
		"reference": func(t *testing.T) {
			writeReferenceConfig(t, path, liveReloadAfter)
			if err := ref.Reload(); err != nil {
				t.Fatal(err)
			}
		},
	}
	urls := map[string]string{"bus": busURL(bus), "reference": ref.ClientURL()}
	outcomes := map[string][]string{}
	for _, side := range []string{"bus", "reference"} {
		t.Run(side, func(t *testing.T) {
			conns, subs := listenAll(t, urls[side], "a1", "b1", "g")
			responder, err := conns["a1"].Subscribe("svc.>", func(m *nats.Msg) { m.Respond([]byte("answer")) })
			if err != nil {
				t.Fatal(err)
			}
			defer responder.Unsubscribe()
			conns["a1"].Flush()
			var steps []string
			publishAll := func(stage string) {
				for _, p := range []struct{ user, subject string }{
					{"a1", "in.a"}, {"a1", "new.a"}, {"a1", "news.x"}, {"a1", "alerts.y"}, {"g", "g.in"},
				} {
					if err := conns[p.user].Publish(p.subject, []byte(stage)); err != nil {
						t.Fatal(err)
					}
					conns[p.user].Flush()
				}
				_, err := conns["b1"].Request("svc.q", nil, time.Second)
				steps = append(steps, stage+" b1 requests svc.q: "+fmt.Sprint(err))
				for _, u := range []string{"a1", "b1", "g"} {
					// The service's own traffic (svc.q, _INBOX) is not
					// what is compared here.
					var got []string
					for _, line := range received(t, subs[u], 300*time.Millisecond) {
						if !strings.HasPrefix(line, "svc.") && !strings.HasPrefix(line, "_INBOX.") && !strings.HasPrefix(line, "_R_.") {
							got = append(got, line)
						}
					}
					steps = append(steps, stage+" "+u+" receives: "+strings.Join(got, ", "))
				}
			}
			publishAll("before")
			reloads[side](t)
			publishAll("after")
			for _, u := range []string{"a1", "b1", "g"} {
				steps = append(steps, fmt.Sprintf("%s connected: %v", u, conns[u].IsConnected()))
			}
			t.Log(lines(steps...))
			outcomes[side] = steps
		})
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
}
