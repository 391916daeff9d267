package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The same nats-server .conf file, run by bus (bus -c nats.conf) and by
// the reference, gives servers that report the same settings in INFO and
// /varz and behave the same for clients (issue 23). Each file uses only
// what bus implements; ports are -1 (a free one) on both.
const confHeader = `
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
server_name: conf-diff
max_payload: 2MB
max_connections: 500
ping_interval: "30s"
ping_max: 3
write_deadline: "5s"
lame_duck_duration: "40s"
lame_duck_grace_period: "2s"
`

func TestConfFileServerSettingsMatchReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, confHeader+"no_sublist_cache: true\n")
	p.sameReports(t,
		[]string{"server_name", "max_payload", "headers", "proto", "auth_required", "tls_required", "jetstream"},
		[]string{"server_name", "max_payload", "max_connections", "ping_interval", "ping_max", "write_deadline",
			"max_pending", "max_control_line", "lame_duck_duration", "lame_duck_grace_period", "auth_required"})
}

func TestConfFileAdvertiseAndHeadersMatchReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, confHeader+"client_advertise: \"edge.example.com:4333\"\nno_header_support: true\n")
	p.sameReports(t, []string{"host", "port", "headers", "connect_urls"}, []string{"host", "port", "connect_urls"})
}

func TestConfFileAuthorizationMatchesReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, confHeader+`
PASS = "alice-secret"
authorization {
  timeout: 2
  users = [
    { user: alice, password: $PASS, permissions: { publish: "orders.>", subscribe: ["_INBOX.>", "orders.*"] } }
    { user: bob, password: "bob-secret", permissions: { publish: { deny: "orders.>" }, subscribe: ">" } }
  ]
}
`)
	p.sameReports(t, []string{"auth_required"}, []string{"auth_required", "auth_timeout"})
	for _, addr := range []string{p.busClient, p.refClient} {
		url := "nats://" + addr
		if nc, err := nats.Connect(url, nats.UserInfo("alice", "wrong")); err == nil {
			nc.Close()
			t.Errorf("%s: a wrong password was accepted", addr)
		}
		bob := connect(t, url, nats.UserInfo("bob", "bob-secret"))
		sub, err := bob.SubscribeSync("orders.new")
		if err != nil {
			t.Fatal(err)
		}
		if err := bob.Flush(); err != nil {
			t.Fatal(err)
		}
		violations := make(chan error, 4)
		alice := connect(t, url, nats.UserInfo("alice", "alice-secret"),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err }))
		if err := alice.Publish("orders.new", []byte("ok")); err != nil {
			t.Fatal(err)
		}
		if _, err := sub.NextMsg(5 * time.Second); err != nil {
			t.Errorf("%s: alice's allowed publish did not arrive: %v", addr, err)
		}
		if err := alice.Publish("billing.new", []byte("denied")); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-violations:
			if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				t.Errorf("%s: denied publish gave %v", addr, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: no permissions violation for a denied publish", addr)
		}
	}
}

func TestConfFileTLSMatchesReference(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "conf")
	cert, key := ca.serverCert(t)
	p := startConfPair(t, confHeader+`
tls {
  cert_file: "`+cert+`"
  key_file: "`+key+`"
  timeout: 2
}
`)
	p.sameReports(t, []string{"tls_required", "tls_verify"}, []string{"tls_required", "tls_timeout"})
	for _, addr := range []string{p.busClient, p.refClient} {
		nc := connect(t, "tls://"+addr, nats.Secure(clientTLS(t, ca, "", "")))
		if !nc.TLSRequired() {
			t.Errorf("%s: TLS not required", addr)
		}
	}
}

func TestConfFileJetStreamMatchesReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, confHeader+`
jetstream {
  store_dir: "STORE"
  max_memory_store: 256MB
  max_file_store: 1GB
  domain: edge
}
`)
	p.sameReports(t, []string{"jetstream", "domain"},
		[]string{"jetstream.config.max_memory", "jetstream.config.max_storage", "jetstream.config.domain"})
	for _, addr := range []string{p.busClient, p.refClient} {
		js, ctx := scenarioJS(t, "nats://"+addr, 10*time.Second)
		info, err := js.AccountInfo(ctx)
		if err != nil {
			t.Fatalf("%s: account info: %v", addr, err)
		}
		if info.Domain != "edge" {
			t.Errorf("%s: domain %q, want edge", addr, info.Domain)
		}
	}
}

func TestConfFileMappingsMatchReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, confHeader+`
mappings {
  "Orders.New": "orders.created"
  "legacy.*.*": "modern.{{wildcard(2)}}.{{wildcard(1)}}"
}
`)
	for _, addr := range []string{p.busClient, p.refClient} {
		nc := connect(t, "nats://"+addr)
		sub, err := nc.SubscribeSync(">")
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, subj := range []string{"Orders.New", "legacy.a.b"} {
			if err := nc.Publish(subj, nil); err != nil {
				t.Fatal(err)
			}
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("%s: publish to %s: %v", addr, subj, err)
			}
			got = append(got, m.Subject)
		}
		if strings.Join(got, ",") != "orders.created,modern.b.a" {
			t.Errorf("%s: mapped to %v", addr, got)
		}
	}
}

func TestConfFileSystemAccountMatchesReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, confHeader+`
authorization {
  users = [ { user: app, password: app-secret } ]
}
accounts {
  SYS { users = [ { user: admin, password: admin-secret } ] }
}
system_account: SYS
`)
	for _, addr := range []string{p.busClient, p.refClient} {
		url := "nats://" + addr
		admin := connect(t, url, nats.UserInfo("admin", "admin-secret"))
		msg, err := admin.Request("$SYS.REQ.SERVER.PING.VARZ", nil, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: the system account's $SYS request: %v", addr, err)
		}
		if !strings.Contains(string(msg.Data), `"conf-diff"`) {
			t.Errorf("%s: $SYS varz reply names no conf-diff: %.200s", addr, msg.Data)
		}
		app := connect(t, url, nats.UserInfo("app", "app-secret"))
		if _, err := app.Request("$SYS.REQ.SERVER.PING.VARZ", nil, 500*time.Millisecond); err == nil {
			t.Errorf("%s: a user outside the system account got a $SYS reply", addr)
		}
	}
}

// A leafnodes remote in a .conf file joins the hub it names, from bus as
// from the reference.
func TestConfFileLeafRemoteMatchesReference(t *testing.T) {
	t.Parallel()
	hub := startReferenceWith(t, func(o *natsserver.Options) {
		o.LeafNode.Host, o.LeafNode.Port = "127.0.0.1", -1
	})
	leafURL := fmt.Sprintf("nats-leaf://127.0.0.1:%d", leafPort(hub))
	p := startConfPair(t, confHeader+`
leafnodes {
  reconnect: "1s"
  remotes = [ { url: "`+leafURL+`" } ]
}
`)
	hubConn := connect(t, "nats://"+refAddr(hub))
	for _, addr := range []string{p.busClient, p.refClient} {
		nc := connect(t, "nats://"+addr)
		subj := "leaf.conf." + strings.NewReplacer(".", "_", ":", "_").Replace(addr)
		sub, err := nc.SubscribeSync(subj)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		// The subscription reaches the hub over the link when it is up.
		eventually(t, 10*time.Second, func() bool {
			if err := hubConn.Publish(subj, []byte("hi")); err != nil {
				t.Fatal(err)
			}
			_, err := sub.NextMsg(50 * time.Millisecond)
			return err == nil
		})
	}
}
