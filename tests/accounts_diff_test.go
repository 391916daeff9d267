package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// TestAccountsIsolated checks, on bus and the reference alike, that each
// account is a subject space of its own: a user subscribed to > sees its
// own account's publishes and nothing of another account's or of the
// global account's, both ways.
func TestAccountsIsolated(t *testing.T) {
	t.Parallel()
	p := startAccountsPair(t)
	got := map[string]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		users := []string{"a1", "a2", "b1", "c1", "g"}
		conns, subs := listenAll(t, url, users...)
		for _, u := range users {
			if err := conns[u].Publish("from."+u, []byte(u)); err != nil {
				t.Fatal(err)
			}
			if err := conns[u].Flush(); err != nil {
				t.Fatal(err)
			}
		}
		var out []string
		for _, u := range users {
			out = append(out, u+": "+strings.Join(received(t, subs[u], 300*time.Millisecond), ", "))
		}
		got[t.Name()] = lines(out...)
	})
	want := lines(
		"a1: from.a1 a1, from.a2 a2",
		"a2: from.a1 a1, from.a2 a2",
		"b1: from.b1 b1",
		"c1: from.c1 c1",
		"g: from.g g",
	)
	for name, g := range got {
		if g != want {
			t.Errorf("%s saw\n%s\nwant\n%s", name, g, want)
		}
	}
}

// TestAccountsMappings checks that an account's mappings apply to its
// publishes only: the global account publishing the same subject is not
// mapped, and sees none of the mapped messages.
func TestAccountsMappings(t *testing.T) {
	t.Parallel()
	p := startAccountsPair(t)
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		a1, a2, g := connectAs(t, url, "a1"), connectAs(t, url, "a2"), connectAs(t, url, "g")
		aSees, _ := a2.SubscribeSync(">")
		gSees, _ := g.SubscribeSync(">")
		for _, nc := range []*nats.Conn{a2, g} {
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		for _, nc := range []*nats.Conn{a1, g} {
			if err := nc.Publish("in.a", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		outcomes[t.Name()] = []string{
			"A: " + strings.Join(received(t, aSees, 300*time.Millisecond), ", "),
			"$G: " + strings.Join(received(t, gSees, 300*time.Millisecond), ", "),
		}
	})
	sameOutcomes(t, outcomes["TestAccountsMappings/reference"], outcomes["TestAccountsMappings/bus"])
	if got := outcomes["TestAccountsMappings/bus"]; got[0] != "A: out.a x" || got[1] != "$G: in.a x" {
		t.Errorf("bus: %q", got)
	}
}

// TestAccountLimits checks account C's limits and their errors against
// the reference: a third connection, a third subscription on one
// connection, and a publish over the account's max_payload.
func TestAccountLimits(t *testing.T) {
	t.Parallel()
	p := startAccountsPair(t)
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		var steps []string
		asyncErr := make(chan error, 8)
		closed := make(chan struct{})
		first := connectAs(t, url, "c1", nats.NoReconnect(),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { asyncErr <- err }))
		second := connectAs(t, url, "c1", nats.NoReconnect(), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		_, err := nats.Connect(url, nats.UserInfo("c1", accountsPass), nats.NoReconnect())
		steps = append(steps, fmt.Sprintf("third connection: %v", err))
		// Another account is not limited by C's connections.
		connectAs(t, url, "a1")

		for i := range 3 {
			if _, err := first.SubscribeSync(fmt.Sprintf("s.%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := first.Flush(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-asyncErr:
			steps = append(steps, fmt.Sprintf("third subscription: %v", err))
		case <-time.After(5 * time.Second):
			steps = append(steps, "third subscription: no error")
		}

		// nats.go learns the account's max_payload from the INFO after
		// its first PONG and refuses itself; a client that does not
		// look is closed by the server.
		steps = append(steps, fmt.Sprintf("nats.go over max_payload: %v, max %d", second.Publish("big", make([]byte, 600)), second.MaxPayload()))
		second.Close()
		<-closed
		raw := dialRaw(t, strings.TrimPrefix(url, "nats://"))
		raw.send(`CONNECT {"user":"c1","pass":"pw","verbose":false}` + "\r\nPUB big 600\r\n" + strings.Repeat("x", 600) + "\r\n")
		steps = append(steps, fmt.Sprintf("raw over max_payload: %q", raw.expectClosed()))
		// Its slot is free again.
		eventually(t, 5*time.Second, func() bool {
			nc, err := nats.Connect(url, nats.UserInfo("c1", accountsPass), nats.NoReconnect())
			if err == nil {
				nc.Close()
			}
			return err == nil
		})
		outcomes[t.Name()] = steps
	})
	ref, bus := outcomes["TestAccountLimits/reference"], outcomes["TestAccountLimits/bus"]
	sameOutcomes(t, ref, bus)
	if len(bus) == 0 || !strings.Contains(bus[0], "maximum account active connections exceeded") {
		t.Errorf("bus: %q", bus)
	}
}

// TestAccountsUserInfo checks that $SYS.REQ.USER.INFO names each user's
// account, as `nats account info` shows it.
func TestAccountsUserInfo(t *testing.T) {
	t.Parallel()
	p := startAccountsPair(t)
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		var steps []string
		for _, u := range []string{"a1", "b1", "g", "admin"} {
			doc, err := sysRequest(connectAs(t, url, u), "$SYS.REQ.USER.INFO", nil, 2*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			steps = append(steps, words(u, field(doc, "data.user"), field(doc, "data.account")))
		}
		outcomes[t.Name()] = steps
	})
	sameOutcomes(t, outcomes["TestAccountsUserInfo/reference"], outcomes["TestAccountsUserInfo/bus"])
}

// TestAccountsMonitoring compares /accountz, /connz?acc= and /subsz?acc=
// with the reference's.
func TestAccountsMonitoring(t *testing.T) {
	t.Parallel()
	p := startAccountsPair(t)
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, base string) {
		a1, a2 := connectAs(t, url, "a1"), connectAs(t, url, "a2")
		connectAs(t, url, "b1")
		for _, nc := range []*nats.Conn{a1, a2} {
			if _, err := nc.SubscribeSync("orders.>"); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		get := func(path string) map[string]any {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var doc map[string]any
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatalf("%s: %v: %s", path, err, body)
			}
			return doc
		}
		var steps []string
		accz := get("/accountz")
		steps = append(steps, fmt.Sprint("accounts ", sortedAny(accz["accounts"]), " system ", accz["system_account"]))
		acc := get("/accountz?acc=A")
		steps = append(steps, words("A", field(acc, "account_detail.account_name"), field(acc, "account_detail.client_connections")))
		connz := get("/connz?acc=A")
		var names []string
		for _, c := range connz["connections"].([]any) {
			names = append(names, fmt.Sprint(field(c, "name"), "@", field(c, "account")))
		}
		slices.Sort(names)
		steps = append(steps, fmt.Sprint("connz A ", connz["num_connections"], " ", names))
		steps = append(steps, fmt.Sprint("connz B ", get("/connz?acc=B")["num_connections"]))
		// The reference lists its own $SYS subscriptions in A too; a
		// test subject of the clients' compares exactly.
		subsz := get("/subsz?acc=A&subs=1&test=orders.x")
		var subs []string
		for _, s := range subsz["subscriptions_list"].([]any) {
			subs = append(subs, fmt.Sprint(field(s, "subject"), "@", field(s, "account")))
		}
		slices.Sort(subs)
		steps = append(steps, fmt.Sprint("subsz A ", subs))
		outcomes[t.Name()] = steps
	})
	sameOutcomes(t, outcomes["TestAccountsMonitoring/reference"], outcomes["TestAccountsMonitoring/bus"])
}

// TestAccountsAccountConnz checks that $SYS.REQ.ACCOUNT.PING.CONNZ from
// an account's user reports that account's connections only.
func TestAccountsAccountConnz(t *testing.T) {
	t.Parallel()
	p := startAccountsPair(t)
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		connectAs(t, url, "b1")
		connectAs(t, url, "g")
		a1 := connectAs(t, url, "a1")
		doc, err := sysRequest(a1, "$SYS.REQ.ACCOUNT.PING.CONNZ", nil, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		list, _ := field(doc, "data.connections").([]any)
		for _, c := range list {
			names = append(names, fmt.Sprint(field(c, "name"), "@", field(c, "account")))
		}
		outcomes[t.Name()] = []string{fmt.Sprint(field(doc, "data.num_connections"), names)}
	})
	sameOutcomes(t, outcomes["TestAccountsAccountConnz/reference"], outcomes["TestAccountsAccountConnz/bus"])
}

// TestAccountsReload reloads the accounts on bus and the reference
// alike: account B goes (its user's connection is closed), user a2 moves
// from A to a new account D (closed, and back in D when it reconnects,
// isolated from A), and a1 stays connected.
func TestAccountsReload(t *testing.T) {
	t.Parallel()
	const before = `
listen: 127.0.0.1:-1
accounts {
  A { users: [ {user: a1, password: pw}, {user: a2, password: pw} ] }
  B { users: [ {user: b1, password: pw} ] }
}
# store: %q
`
	const after = `
listen: 127.0.0.1:-1
accounts {
  A { users: [ {user: a1, password: pw} ] }
  D { users: [ {user: a2, password: pw} ] }
}
# store: %q
`
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), Accounts: []server.Account{
		{Name: "A", Users: []server.User{user("a1"), user("a2")}},
		{Name: "B", Users: []server.User{user("b1")}},
	}}
	bus := startBus(t, opts)
	ref, path := startReferenceFile(t, before)
	reloads := map[string]func(t *testing.T){
		"bus": func(t *testing.T) {
			opts.Accounts = []server.Account{
				{Name: "A", Users: []server.User{user("a1")}},
				{Name: "D", Users: []server.User{user("a2")}},
			}
			if err := bus.Reload(opts); err != nil {
				t.Fatal(err)
			}
		},
		"reference": func(t *testing.T) {
			writeReferenceConfig(t, path, after)
			if err := ref.Reload(); err != nil {
				t.Fatal(err)
			}
		},
	}
	urls := map[string]string{"bus": busURL(bus), "reference": ref.ClientURL()}
	outcomes := map[string][]string{}
	for _, side := range []string{"bus", "reference"} {
		t.Run(side, func(t *testing.T) {
			url := urls[side]
			closed := map[string]chan struct{}{}
			conns := map[string]*nats.Conn{}
			for _, u := range []string{"a1", "a2", "b1"} {
				ch := make(chan struct{})
				closed[u] = ch
				conns[u] = connectAs(t, url, u, nats.NoReconnect(), nats.ClosedHandler(func(*nats.Conn) { close(ch) }),
					nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
			}
			reloads[side](t)
			var steps []string
			for _, u := range []string{"b1", "a2"} {
				select {
				case <-closed[u]:
					steps = append(steps, fmt.Sprintf("%s closed: %v", u, conns[u].LastError()))
				case <-time.After(5 * time.Second):
					steps = append(steps, u+" still open")
				}
			}
			steps = append(steps, fmt.Sprintf("a1 connected: %v", conns["a1"].IsConnected()))
			_, err := nats.Connect(url, nats.UserInfo("b1", accountsPass), nats.NoReconnect())
			steps = append(steps, fmt.Sprintf("b1 again: %v", err))
			a2 := connectAs(t, url, "a2")
			sees, _ := a2.SubscribeSync(">")
			if err := a2.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := conns["a1"].Publish("from.a1", nil); err != nil {
				t.Fatal(err)
			}
			if err := conns["a1"].Flush(); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, "a2 in D sees: "+strings.Join(received(t, sees, 300*time.Millisecond), ", "))
			outcomes[side] = steps
		})
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
}

// TestAccountsSysAccountRequests compares the system account's
// $SYS.REQ.ACCOUNT.<account>.CONNZ, SUBSZ and INFO with the reference's.
func TestAccountsSysAccountRequests(t *testing.T) {
	t.Parallel()
	p := startAccountsPair(t)
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		a1 := connectAs(t, url, "a1")
		connectAs(t, url, "a2")
		connectAs(t, url, "b1")
		if _, err := a1.SubscribeSync("orders.>"); err != nil {
			t.Fatal(err)
		}
		if err := a1.Flush(); err != nil {
			t.Fatal(err)
		}
		admin := connectAs(t, url, "admin")
		var steps []string
		for _, r := range []struct{ subject, body string }{
			{"$SYS.REQ.ACCOUNT.A.CONNZ", ""},
			{"$SYS.REQ.ACCOUNT.B.CONNZ", ""},
			{"$SYS.REQ.ACCOUNT.A.SUBSZ", `{"subscriptions":true,"test":"orders.x"}`},
			{"$SYS.REQ.ACCOUNT.A.INFO", ""},
		} {
			doc, err := sysRequest(admin, r.subject, []byte(r.body), 2*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", r.subject, err)
			}
			steps = append(steps, words(r.subject, field(doc, "data.num_connections"), field(doc, "data.total"),
				field(doc, "data.subscriptions_list.0.subject"), field(doc, "data.account_name"), field(doc, "data.client_connections"), field(doc, "error")))
		}
		outcomes[t.Name()] = steps
	})
	sameOutcomes(t, outcomes["TestAccountsSysAccountRequests/reference"], outcomes["TestAccountsSysAccountRequests/bus"])
}
