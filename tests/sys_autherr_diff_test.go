package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// authErrNotServed are the auth error event's fields bus leaves out, as
// for the account events (TestAccountsConnectEventsMatchReference).
var authErrNotServed = map[string]string{
	"server.cluster": "bus has no cluster", "server.feature_flags": "bus's envelopes carry flags only", "server.domain": "", "server.tags": "", "server.xkey": "",
	"client.server": "", "client.cluster": "", "client.alts": "", "client.jwt": "", "client.issuer_key": "",
	"client.name_tag": "", "client.tags": "", "client.client_id": "", "client.nonce": "", "client.reply": "",
}

// awaitAuthErr subscribes admin to the auth error events, runs refuse
// and describes the one event it causes (the server id in its subject
// written as ID), with the event itself.
func awaitAuthErr(t *testing.T, admin *nats.Conn, refuse func()) (string, map[string]any) {
	t.Helper()
	sub, err := admin.SubscribeSync("$SYS.SERVER.*.CLIENT.AUTH.ERR")
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Flush(); err != nil {
		t.Fatal(err)
	}
	refuse()
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no auth error event: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(m.Data, &doc); err != nil {
		t.Fatal(err)
	}
	subject := strings.Replace(m.Subject, fmt.Sprint(field(doc, "server.id")), "ID", 1)
	return fmt.Sprintf("%s: type %v acc %v user %v name %v kind %v client_type %v reason %v",
		subject, field(doc, "type"), field(doc, "client.acc"), field(doc, "client.user"), field(doc, "client.name"),
		field(doc, "client.kind"), field(doc, "client.client_type"), field(doc, "reason")), doc
}

// TestAuthErrorEventMatchesReference checks that a client refused for a
// wrong password is announced on $SYS.SERVER.<id>.CLIENT.AUTH.ERR to
// the system account's users, as by the reference, in the same shape.
func TestAuthErrorEventMatchesReference(t *testing.T) {
	t.Parallel()
	bus, ref := startAccountsSysPair(t)
	docs := map[string]map[string]any{}
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		admin := connectAs(t, url, "admin")
		step, doc := awaitAuthErr(t, admin, func() {
			if _, err := nats.Connect(url, nats.UserInfo("a1", "wrong"), nats.Name("intruder"), nats.NoReconnect()); err == nil {
				t.Fatal("a wrong password connected")
			}
		})
		docs[url] = doc
		return []string{step}
	})
	sameShape(t, "auth error event", docs[busURL(bus)], docs[ref.ClientURL()], authErrNotServed)
}

// TestAuthErrorEventOnCalloutRefusal checks that a client the auth
// callout refuses is announced on $SYS.SERVER.<id>.CLIENT.AUTH.ERR, as
// by the reference (whose event does not carry the callout's error text).
func TestAuthErrorEventOnCalloutRefusal(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, false)
	opts := w.busOptions()
	opts.SystemAccount = server.SystemAccount{Name: "SYS", Users: []server.User{{Name: "admin", Password: calloutPass}}}
	opts.Authorization.Callout.AuthUsers = append(opts.Authorization.Callout.AuthUsers, "admin")
	refConfig := strings.Replace(w.referenceConfig(), "  OTHER {}", "  OTHER {}\n  SYS { users: [ {user: admin, password: pw} ] }", 1)
	refConfig = strings.Replace(refConfig, "auth_users: [ auth ]", "auth_users: [ auth, admin ]", 1) + "system_account: SYS\n"
	bus, ref := startBus(t, opts), startReferenceConfig(t, refConfig)
	docs := map[string]map[string]any{}
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		w.serve(t, url, func(*jwt.AuthorizationRequestClaims) decision { return decision{errText: "bad password for alice"} })
		admin := connect(t, url, nats.UserInfo("admin", calloutPass))
		step, doc := awaitAuthErr(t, admin, func() {
			if _, err := nats.Connect(url, nats.UserInfo("alice", "x"), nats.Name("refused"), nats.NoReconnect()); err == nil {
				t.Fatal("the callout's refusal connected")
			}
		})
		docs[url] = doc
		return []string{step}
	})
	sameShape(t, "auth error event", docs[busURL(bus)], docs[ref.ClientURL()], authErrNotServed)
}

// TestAuthErrorEventOperatorMode checks the auth error event of a user
// whose JWT expired, in operator mode, against the reference.
func TestAuthErrorEventOperatorMode(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	sys, _ := w.user("SYS", nil, nil)
	expired, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(-time.Hour).Unix() })
	p := startJWTPair(t, w)
	docs := map[string]map[string]any{}
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		admin := connect(t, url, nats.UserCredentials(sys))
		step, doc := awaitAuthErr(t, admin, func() {
			if _, err := nats.Connect(url, nats.UserCredentials(expired), nats.Name("expired"), nats.NoReconnect()); err == nil {
				t.Fatal("an expired user JWT connected")
			}
		})
		docs[url] = doc
		return []string{step}
	})
	sameShape(t, "auth error event", docs[busURL(p.bus)], docs[p.refURL], authErrNotServed)
}
