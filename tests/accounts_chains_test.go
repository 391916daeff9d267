package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// A chain: A exports a stream and a service, B imports both and exports
// them again, C imports them from B (the stream under a prefix).
const accountsChainsReferenceConfig = `
listen: 127.0.0.1:-1
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    exports [ { stream: "ev.>" }, { service: "svc" } ]
  }
  B {
    users: [ {user: b1, password: pw} ]
    imports [
      { stream: { account: A, subject: "ev.>" } }
      { service: { account: A, subject: "svc" } }
    ]
    exports [ { stream: "ev.>" }, { service: "svc" } ]
  }
  C {
    users: [ {user: c1, password: pw} ]
    imports [
      { stream: { account: B, subject: "ev.>" }, prefix: via_b }
      { service: { account: B, subject: "svc" }, to: "bsvc" }
    ]
  }
}
# store: %q
`

func accountsChainsBusOptions() server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	exports := server.Exports{Streams: []server.StreamExport{{Subject: "ev.>"}}, Services: []server.ServiceExport{{Subject: "svc"}}}
	return server.Options{Accounts: []server.Account{
		{Name: "A", Users: []server.User{user("a1")}, Exports: exports},
		{Name: "B", Users: []server.User{user("b1")}, Exports: exports, Imports: server.Imports{
			Streams:  []server.StreamImport{{Account: "A", Subject: "ev.>"}},
			Services: []server.ServiceImport{{Account: "A", Subject: "svc"}},
		}},
		{Name: "C", Users: []server.User{user("c1")}, Imports: server.Imports{
			Streams:  []server.StreamImport{{Account: "B", Subject: "ev.>", Prefix: "via_b"}},
			Services: []server.ServiceImport{{Account: "B", Subject: "svc", To: "bsvc"}},
		}},
	}}
}

// TestAccountsImportChains checks, on bus and the reference alike, that
// C's request reaches A's responder through both service imports and
// its answer comes back along the chain, while a stream A publishes
// stops at B: the reference does not forward it through B's re-export
// (only what B's own users publish reaches C).
func TestAccountsImportChains(t *testing.T) {
	t.Parallel()
	bus := startBus(t, accountsChainsBusOptions())
	ref := startReferenceConfig(t, accountsChainsReferenceConfig)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		conns, subs := listenAll(t, url, "a1", "b1", "c1")
		for _, p := range [][2]string{{"a1", "ev.x"}, {"b1", "ev.y"}} {
			if err := conns[p[0]].Publish(p[1], []byte(p[0])); err != nil {
				t.Fatal(err)
			}
			if err := conns[p[0]].Flush(); err != nil {
				t.Fatal(err)
			}
		}
		var steps []string
		for _, u := range []string{"a1", "b1", "c1"} {
			steps = append(steps, u+": "+strings.Join(received(t, subs[u], 300*time.Millisecond), ", "))
		}
		a1, c1 := connectAs(t, url, "a1"), connectAs(t, url, "c1")
		if _, err := a1.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond([]byte("answer from A to " + m.Subject)) }); err != nil {
			t.Fatal(err)
		}
		if err := a1.Flush(); err != nil {
			t.Fatal(err)
		}
		reply, err := c1.Request("bsvc", nil, 2*time.Second)
		switch {
		case err == nil:
			steps = append(steps, "c1 request: "+string(reply.Data))
		case errors.Is(err, nats.ErrNoResponders):
			steps = append(steps, "c1 request: no responders")
		default:
			steps = append(steps, fmt.Sprintf("c1 request: %v", err))
		}
		return steps
	})
}
