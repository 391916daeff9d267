package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestSysAccountIsolated checks, on bus and the reference alike, that the
// system account is a subject space of its own: its users see nothing of
// the global account's traffic and the global users see nothing of
// theirs, the answers to the admin's requests included; and that the
// system account has no JetStream.
func TestSysAccountIsolated(t *testing.T) {
	t.Parallel()
	p := startSysPair(t)
	p.each(t, func(t *testing.T, url, id string) {
		admin := connect(t, url, nats.UserInfo(sysAdmin, sysAdminPass))
		all := connect(t, url, nats.UserInfo(sysAll, sysAllPass))
		adminSees, err := admin.SubscribeSync("app.>")
		if err != nil {
			t.Fatal(err)
		}
		globalSees, err := all.SubscribeSync(">")
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := all.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := all.Publish("app.x", []byte("global")); err != nil {
			t.Fatal(err)
		}
		if err := admin.Publish("app.y", []byte("system")); err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"$SYS.REQ.SERVER.PING", "$SYS.REQ.SERVER.PING.VARZ", "$SYS.REQ.SERVER." + id + ".CONNZ", "$SYS.REQ.USER.INFO"} {
			if _, err := admin.Request(subj, nil, 2*time.Second); err != nil {
				t.Fatalf("admin %s: %v", subj, err)
			}
		}
		// The admin's own publish on app.y is in its account: it gets it.
		m, err := adminSees.NextMsg(2 * time.Second)
		if err != nil || string(m.Data) != "system" {
			t.Fatalf("admin's own app.y: %v %v", m, err)
		}
		if m, err := adminSees.NextMsg(200 * time.Millisecond); err == nil {
			t.Errorf("the admin received the global account's %s %q", m.Subject, m.Data)
		}
		m, err = globalSees.NextMsg(2 * time.Second)
		if err != nil || string(m.Data) != "global" {
			t.Fatalf("global app.x: %v %v", m, err)
		}
		if m, err := globalSees.NextMsg(200 * time.Millisecond); err == nil {
			t.Errorf("a global user received the system account's %s %q", m.Subject, m.Data)
		}
		// No JetStream in the system account.
		m, err = admin.Request("$JS.API.INFO", nil, 2*time.Second)
		if err != nil {
			t.Fatalf("admin $JS.API.INFO: %v", err)
		}
		var doc map[string]any
		mustJSON(t, m.Data, &doc)
		if got := words(field(doc, "error.code"), field(doc, "error.err_code")); got != "503 10039" {
			t.Errorf("admin $JS.API.INFO: %s, want 503 10039 (%s)", got, m.Data)
		}
	})
}

// TestSysRequestOptions checks request bodies as the reference reads
// them: endpoint options, a bad body (400), and a filter that leaves the
// server out (no answer at all).
func TestSysRequestOptions(t *testing.T) {
	t.Parallel()
	p := startSysPair(t)
	p.each(t, func(t *testing.T, url, id string) {
		admin := connect(t, url, nats.UserInfo(sysAdmin, sysAdminPass))
		connect(t, url, nats.UserInfo(sysAll, sysAllPass), nats.Name("second"))
		doc, err := sysRequest(admin, "$SYS.REQ.SERVER.PING.CONNZ", []byte(`{"limit":1,"auth":true,"sort":"cid"}`), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := words(field(doc, "data.limit"), field(doc, "data.num_connections"), field(doc, "data.total"), field(doc, "data.connections.0.authorized_user"), field(doc, "data.connections.0.account")); got != "1 1 2 admin SYS" {
			t.Errorf("connz limit 1 auth: %s", got)
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER."+id+".CONNZ", []byte(`{"acc":"$G","subscriptions":true}`), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := words(field(doc, "data.num_connections"), field(doc, "data.connections.0.name")); got != "1 second" {
			t.Errorf("connz acc=$G: %s", got)
		}
		// /subsz names each subscription's account, and filters by it.
		if _, err := admin.SubscribeSync("ops.>"); err != nil {
			t.Fatal(err)
		}
		if err := admin.Flush(); err != nil {
			t.Fatal(err)
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER.PING.SUBSZ", []byte(`{"subscriptions":true,"account":"SYS","test":"ops.x"}`), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := words(field(doc, "data.total"), field(doc, "data.subscriptions_list.0.account")); got != "1 SYS" {
			t.Errorf("subsz account=SYS: %s (%v)", got, doc["data"])
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER.PING.CONNZ", []byte(`{bad`), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(field(doc, "error.code")); got != "400" || doc["data"] != nil {
			t.Errorf("bad body: %v", doc)
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER.PING.CONNZ", []byte(`{"sort":"nonsense"}`), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(field(doc, "error.code")); got != "500" {
			t.Errorf("bad sort: %v", doc)
		}
		for _, body := range []string{`{"server_name":"not-this-one"}`, `{"cluster":"c1"}`, `{"tags":["x"]}`} {
			if _, err := sysRequest(admin, "$SYS.REQ.SERVER.PING.VARZ", []byte(body), 300*time.Millisecond); !errors.Is(err, nats.ErrTimeout) {
				t.Errorf("filter %s: %v, want no answer", body, err)
			}
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER.PING.JSZ", []byte(`{"accounts":true,"streams":true,"consumer":true}`), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(field(doc, "data.account_details.0.name")); got != "$G" {
			t.Errorf("jsz accounts: %v", doc)
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER.PING.HEALTHZ", []byte(`{"js-enabled-only":true}`), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := words(field(doc, "data.status"), field(doc, "data.status_code")); got != "ok 200" {
			t.Errorf("healthz: %v", doc)
		}
	})
}

// TestSysKickAndLDMClient: the admin closes one connection by cid, or
// tells it to reconnect elsewhere, as with the reference; an unknown cid
// is an error in the answer.
func TestSysKickAndLDMClient(t *testing.T) {
	t.Parallel()
	p := startSysPair(t)
	p.each(t, func(t *testing.T, url, id string) {
		admin := connect(t, url, nats.UserInfo(sysAdmin, sysAdminPass))
		told := make(chan struct{}, 1)
		closed := make(chan struct{})
		victim := connect(t, url, nats.UserInfo(sysAll, sysAllPass), nats.NoReconnect(),
			nats.LameDuckModeHandler(func(*nats.Conn) { told <- struct{}{} }),
			nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		cid, err := victim.GetClientID()
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(fmt.Sprintf(`{"cid":%d}`, cid))
		doc, err := sysRequest(admin, "$SYS.REQ.SERVER."+id+".LDM", body, 2*time.Second)
		if err != nil || doc["error"] != nil {
			t.Fatalf("LDM: %v %v", doc, err)
		}
		select {
		case <-told:
		case <-time.After(5 * time.Second):
			t.Fatal("the client was not told of lame-duck mode")
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER."+id+".KICK", body, 2*time.Second)
		if err != nil || doc["error"] != nil {
			t.Fatalf("KICK: %v %v", doc, err)
		}
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("the kicked client is still connected")
		}
		doc, err = sysRequest(admin, "$SYS.REQ.SERVER."+id+".KICK", []byte(`{"cid":99999}`), 2*time.Second)
		if err != nil || words(field(doc, "error.code"), field(doc, "error.description")) != "500 no such client or leafnode id" {
			t.Errorf("KICK of an unknown cid: %v %v", doc, err)
		}
	})
}
