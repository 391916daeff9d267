package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The exports and imports scenario: A exports a public stream, a stream
// for C only, a singleton service and a streamed one; B and C import.
const accountsImportsReferenceConfig = `
listen: 127.0.0.1:-1
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    exports [
      { stream: "events.>" }
      { stream: "private.>", accounts: [C] }
      { service: "help.*" }
      { service: "feed", response_type: stream, response_threshold: "1s" }
    ]
  }
  B {
    users: [ {user: b1, password: pw} ]
    imports [
      { stream: { account: A, subject: "events.>" }, prefix: from_a }
      { service: { account: A, subject: "help.*" }, to: "ahelp.*" }
      { service: { account: A, subject: "feed" } }
    ]
  }
  C {
    users: [ {user: c1, password: pw} ]
    imports [ { stream: { account: A, subject: "private.>" } } ]
  }
}
# store: %q
`

func accountsImportsBusOptions() server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	return server.Options{Accounts: []server.Account{
		{Name: "A", Users: []server.User{user("a1")}, Exports: server.Exports{
			Streams: []server.StreamExport{{Subject: "events.>"}, {Subject: "private.>", Accounts: []string{"C"}}},
			Services: []server.ServiceExport{{Subject: "help.*"},
				{Subject: "feed", ResponseType: "stream", ResponseThreshold: time.Second}},
		}},
		{Name: "B", Users: []server.User{user("b1")}, Imports: server.Imports{
			Streams:  []server.StreamImport{{Account: "A", Subject: "events.>", Prefix: "from_a"}},
			Services: []server.ServiceImport{{Account: "A", Subject: "help.*", To: "ahelp.*"}, {Account: "A", Subject: "feed"}},
		}},
		{Name: "C", Users: []server.User{user("c1")}, Imports: server.Imports{
			Streams: []server.StreamImport{{Account: "A", Subject: "private.>"}},
		}},
	}}
}

// TestAccountsStreamImports checks, on bus and the reference alike, that
// an exported stream reaches its importers under their prefix, that a
// restricted one reaches only the account it names, and that nothing
// flows the other way.
func TestAccountsStreamImports(t *testing.T) {
	t.Parallel()
	bus := startBus(t, accountsImportsBusOptions())
	ref := startReferenceConfig(t, accountsImportsReferenceConfig)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		conns, subs := listenAll(t, url, "a1", "b1", "c1")
		for _, p := range [][2]string{{"a1", "events.x"}, {"a1", "private.y"}, {"a1", "other.z"}, {"b1", "events.q"}, {"c1", "private.r"}} {
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
		return steps
	})
}

// TestAccountsServiceImports checks service imports against the
// reference: a request on the importer's subject reaches the exporter's
// responder on the exported subject and its answer comes back; a
// singleton service's second answer does not; a streamed one's do; a
// request nobody serves gets no responders.
func TestAccountsServiceImports(t *testing.T) {
	t.Parallel()
	bus := startBus(t, accountsImportsBusOptions())
	ref := startReferenceConfig(t, accountsImportsReferenceConfig)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		var steps []string
		a1, b1 := connectAs(t, url, "a1"), connectAs(t, url, "b1")
		_, err := b1.Request("feed", nil, 2*time.Second)
		steps = append(steps, fmt.Sprintf("feed without responder: %v", errors.Is(err, nats.ErrNoResponders)))

		twice := func(m *nats.Msg) {
			for i := range 2 {
				_ = m.Respond(fmt.Appendf(nil, "%s answer %d", m.Subject, i))
			}
		}
		if _, err := a1.Subscribe("help.*", twice); err != nil {
			t.Fatal(err)
		}
		if _, err := a1.Subscribe("feed", twice); err != nil {
			t.Fatal(err)
		}
		if err := a1.Flush(); err != nil {
			t.Fatal(err)
		}
		for _, subject := range []string{"ahelp.x", "feed"} {
			inbox := nats.NewInbox()
			sub, err := b1.SubscribeSync(inbox)
			if err != nil {
				t.Fatal(err)
			}
			if err := b1.PublishRequest(subject, inbox, nil); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(received(t, sub, 300*time.Millisecond), ", ")
			steps = append(steps, subject+": "+strings.ReplaceAll(got, inbox, "<inbox>"))
		}
		return steps
	})
}

// TestAccountsImportErrors compares the refusals of imports the exports
// do not allow, and of a cycle, with the reference's.
func TestAccountsImportErrors(t *testing.T) {
	t.Parallel()
	user := func(name string) []server.User { return []server.User{{Name: name, Password: accountsPass}} }
	for _, tc := range []struct {
		name, config string
		accounts     []server.Account
		want         string
	}{
		{"restricted stream", `accounts {
  A { users: [ {user: a1, password: pw} ], exports [ { stream: "private.>", accounts: [C] } ] }
  B { users: [ {user: b1, password: pw} ], imports [ { stream: { account: A, subject: "private.>" } } ] }
  C { users: [ {user: c1, password: pw} ] }
}`, []server.Account{
			{Name: "A", Users: user("a1"), Exports: server.Exports{Streams: []server.StreamExport{{Subject: "private.>", Accounts: []string{"C"}}}}},
			{Name: "B", Users: user("b1"), Imports: server.Imports{Streams: []server.StreamImport{{Account: "A", Subject: "private.>"}}}},
			{Name: "C", Users: user("c1")},
		}, `Error adding stream import "private.>": stream import not authorized`},
		{"unexported service", `accounts {
  A { users: [ {user: a1, password: pw} ] }
  B { users: [ {user: b1, password: pw} ], imports [ { service: { account: A, subject: "help" } } ] }
}`, []server.Account{
			{Name: "A", Users: user("a1")},
			{Name: "B", Users: user("b1"), Imports: server.Imports{Services: []server.ServiceImport{{Account: "A", Subject: "help"}}}},
		}, `Error adding service import "help": service import not authorized`},
		{"missing account", `accounts {
  B { users: [ {user: b1, password: pw} ], imports [ { stream: { account: Z, subject: "x" } } ] }
}`, []server.Account{
			{Name: "B", Users: user("b1"), Imports: server.Imports{Streams: []server.StreamImport{{Account: "Z", Subject: "x"}}}},
		}, `"Z" account not defined for stream import`},
		{"service cycle", `accounts {
  A { users: [ {user: a1, password: pw} ], exports [ { service: "q" } ], imports [ { service: { account: B, subject: "q" } } ] }
  B { users: [ {user: b1, password: pw} ], exports [ { service: "q" } ], imports [ { service: { account: A, subject: "q" } } ] }
}`, []server.Account{
			{Name: "A", Users: user("a1"), Exports: server.Exports{Services: []server.ServiceExport{{Subject: "q"}}},
				Imports: server.Imports{Services: []server.ServiceImport{{Account: "B", Subject: "q"}}}},
			{Name: "B", Users: user("b1"), Exports: server.Exports{Services: []server.ServiceExport{{Subject: "q"}}},
				Imports: server.Imports{Services: []server.ServiceImport{{Account: "A", Subject: "q"}}}},
		}, "import forms a cycle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "nats.conf")
			if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			_, refErr := natsserver.ProcessConfigFile(path)
			if refErr == nil || !strings.Contains(refErr.Error(), tc.want) {
				t.Fatalf("reference: %v, want %q", refErr, tc.want)
			}
			_, busErr := server.New(server.Options{Accounts: tc.accounts})
			if busErr == nil || !strings.Contains(busErr.Error(), tc.want) {
				t.Fatalf("bus: %v, want %q (the reference: %v)", busErr, tc.want, refErr)
			}
		})
	}
}
