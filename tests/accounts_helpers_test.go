package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The accounts scenario: accounts A (two users, a mapping) and B (one
// user), C with limits, the system account, and a global user g.
const accountsPass = "pw"

// accountsReferenceConfig is the scenario in nats-server's syntax, with
// a %q verb for the store directory; accountsBusOptions is the same for
// bus.
const accountsReferenceConfig = `
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
accounts {
  A { users: [ {user: a1, password: pw}, {user: a2, password: pw} ], mappings { "in.a": "out.a" } }
  B { users: [ {user: b1, password: pw} ] }
  C {
    users: [ {user: c1, password: pw} ]
    limits { max_connections: 2, max_subscriptions: 2, max_payload: 512 }
  }
  SYS { users: [ {user: admin, password: pw} ] }
}
authorization { users: [ {user: g, password: pw} ] }
system_account: SYS
# store: %q
`

func accountsBusOptions() server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	return server.Options{
		HTTPPort:      -1,
		Authorization: server.Authorization{Users: []server.User{user("g")}},
		SystemAccount: server.SystemAccount{Name: "SYS", Users: []server.User{user("admin")}},
		Accounts: []server.Account{
			{Name: "A", Users: []server.User{user("a1"), user("a2")},
				Mappings: []server.Mapping{{Source: "in.a", Destinations: []server.MapDestination{{Subject: "out.a", Weight: 100}}}}},
			{Name: "B", Users: []server.User{user("b1")}},
			{Name: "C", Users: []server.User{user("c1")},
				Limits: server.AccountLimits{MaxConnections: 2, MaxSubscriptions: 2, MaxPayload: 512}},
		},
	}
}

// accountsPair is bus and the reference with the scenario's accounts.
type accountsPair struct {
	bus *server.Server
	ref *natsserver.Server
}

func startAccountsPair(t *testing.T) accountsPair {
	t.Helper()
	return accountsPair{bus: startBus(t, accountsBusOptions()), ref: startReferenceConfig(t, accountsReferenceConfig)}
}

// each runs f against bus and then the reference, with the client URL
// and the monitoring base URL.
func (p accountsPair) each(t *testing.T, f func(t *testing.T, url, http string)) {
	t.Run("bus", func(t *testing.T) { f(t, busURL(p.bus), "http://"+p.bus.HTTPAddr().String()) })
	t.Run("reference", func(t *testing.T) { f(t, p.ref.ClientURL(), "http://"+p.ref.MonitorAddr().String()) })
}

// connectAs connects as one of the scenario's users.
func connectAs(t *testing.T, url, user string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	return connect(t, url, append([]nats.Option{nats.UserInfo(user, accountsPass), nats.Name(user)}, opts...)...)
}

// received collects what a subscription gets until it has been quiet
// for quiet, as sorted "subject data" lines.
func received(t *testing.T, sub *nats.Subscription, quiet time.Duration) []string {
	t.Helper()
	var out []string
	for {
		m, err := sub.NextMsg(quiet)
		if err != nil {
			break
		}
		out = append(out, m.Subject+" "+string(m.Data))
	}
	sort.Strings(out)
	return out
}

// writeReferenceConfig writes config text (a %q verb for the store
// directory) where the reference can read it again on reload.
func writeReferenceConfig(t *testing.T, path, config string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(fmt.Sprintf(config, filepath.Dir(path))), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startReferenceFile runs the reference from a config file it may
// reload.
func startReferenceFile(t *testing.T, config string) (*natsserver.Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nats.conf")
	writeReferenceConfig(t, path, config)
	fileOpts, err := natsserver.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("reference config: %v", err)
	}
	ns := startReferenceWith(t, func(o *natsserver.Options) {
		*o = *fileOpts
		o.NoLog, o.NoSigs = true, true
	})
	return ns, path
}

// lines joins what a scenario saw, one step a line.
func lines(steps ...string) string { return strings.Join(steps, "\n") }

// bothSides runs scenario against bus and then the reference, each in a
// subtest, and compares the steps they report.
func bothSides(t *testing.T, busURL, refURL string, scenario func(t *testing.T, url string) []string) {
	t.Helper()
	out := map[string][]string{}
	for _, side := range []struct{ name, url string }{{"bus", busURL}, {"reference", refURL}} {
		t.Run(side.name, func(t *testing.T) { out[side.name] = scenario(t, side.url) })
	}
	sameOutcomes(t, out["reference"], out["bus"])
}

// listenAll connects as each user and subscribes it to everything.
func listenAll(t *testing.T, url string, users ...string) (map[string]*nats.Conn, map[string]*nats.Subscription) {
	t.Helper()
	conns, subs := map[string]*nats.Conn{}, map[string]*nats.Subscription{}
	for _, u := range users {
		nc := connectAs(t, url, u)
		sub, err := nc.SubscribeSync(">")
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		conns[u], subs[u] = nc, sub
	}
	return conns, subs
}
