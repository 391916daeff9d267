package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// TestJWTResolverRestartKeepsPushes checks that account JWTs pushed to a
// full resolver are in its directory after a restart, and that the
// reference reads the directory bus wrote: a user of a pushed account
// connects to a new bus on the same dir and to the reference on it.
func TestJWTResolverRestartKeepsPushes(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	a := w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Limits.Payload = 1000 })
	sysCreds, _ := w.user("SYS", nil, nil)
	credsA, _ := w.user("A", nil, nil)
	dir := t.TempDir()
	first, err := server.New(w.resolverOptions(dir, "SYS"))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	sys := connect(t, busURL(first), nats.UserCredentials(sysCreds))
	if got := claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(a.jwt)); !strings.Contains(got, "jwt updated") {
		t.Fatalf("push: %s", got)
	}
	sys.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	second := startBus(t, w.resolverOptions(dir, "SYS"))
	nc := connect(t, busURL(second), nats.UserCredentials(credsA))
	// bus tells the account's payload limit in an INFO after the
	// connect handshake.
	if !waitFor(2*time.Second, func() bool { _ = nc.Flush(); return nc.MaxPayload() == 1000 }) {
		t.Fatalf("max payload after restart %d, want the pushed JWT's 1000", nc.MaxPayload())
	}
	ref, _ := startReferenceFile(t, w.resolverConfig(dir, "SYS"))
	rc := connect(t, ref.ClientURL(), nats.UserCredentials(credsA))
	if !waitFor(2*time.Second, func() bool { _ = rc.Flush(); return rc.MaxPayload() == 1000 }) {
		t.Fatalf("reference on bus's dir: max payload %d, want 1000", rc.MaxPayload())
	}
}

// TestJWTResolverRefusesInvalidUpdate checks pushes the reference
// refuses as invalid (an activation token issued to another account, or
// for another subject) and one bus refuses besides: an account JWT no
// trusted operator signed, which the reference stores and then cannot
// use. The account keeps its JWT in force and in the store.
func TestJWTResolverRefusesInvalidUpdate(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	a := w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Exports.Add(&jwt.Export{Subject: "private.>", Type: jwt.Stream, TokenReq: true})
	})
	b := w.addAccount("B", nil)
	c := w.addAccount("C", nil)
	good := b.jwt
	sysCreds, _ := w.user("SYS", nil, nil)
	otherToken := activation(t, a.kp, "", c.pub, "private.>", jwt.Stream, nil)
	w.addAccount("B", func(ac *jwt.AccountClaims) {
		ac.Imports.Add(&jwt.Import{Subject: "private.>", Account: a.pub, Type: jwt.Stream, Token: otherToken})
	})
	othersToken := b.jwt
	stranger := newJWTWorld(t)
	strangerB := stranger.addAccount("B", nil)
	strangerB.claims.Subject = b.pub
	signed, err := strangerB.claims.Encode(stranger.operator)
	if err != nil {
		t.Fatal(err)
	}
	opts := w.resolverOptions(t.TempDir(), "SYS", "A")
	opts.Operator.Accounts[b.pub] = good
	bus := startBus(t, opts)
	sys := connect(t, busURL(bus), nats.UserCredentials(sysCreds))
	for _, tc := range []struct{ name, token, want string }{
		{"token of another account", othersToken, "jwt validation failed - validation errors: [activation token doesn't match account it is being included in"},
		{"untrusted operator", signed, "neither a trusted operator nor one of its signing keys"},
	} {
		if got := claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(tc.token)); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s, want %q", tc.name, got, tc.want)
		}
	}
	m, err := sys.Request("$SYS.REQ.ACCOUNT."+b.pub+".CLAIMS.LOOKUP", nil, 2*time.Second)
	if err != nil || string(m.Data) != good {
		t.Fatalf("B's stored JWT changed: %v", err)
	}
}

// TestJWTResolverCacheLimit checks a cache resolver at its limit: of
// more preloaded JWTs than it keeps, it stores its limit, and a push
// updates an account it has.
func TestJWTResolverCacheLimit(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	for _, n := range []string{"A", "B"} {
		w.addAccount(n, nil)
	}
	sysCreds, _ := w.user("SYS", nil, nil)
	opts := w.resolverOptions(t.TempDir(), "SYS", "A", "B")
	opts.Operator.Resolver = &server.Resolver{Type: server.ResolverCache, Dir: opts.Operator.Resolver.Dir, Limit: 2}
	bus := startBus(t, opts)
	sys := connect(t, busURL(bus), nats.UserCredentials(sysCreds))
	var list struct{ Data []string }
	lm, err := sys.Request("$SYS.REQ.CLAIMS.LIST", nil, 2*time.Second)
	if err == nil {
		err = json.Unmarshal(lm.Data, &list)
	}
	if err != nil || len(list.Data) != 2 {
		t.Fatalf("list %v (%v), want 2 keys", list.Data, err)
	}
	kept := list.Data[0]
	if kept == w.sysKey {
		kept = list.Data[1]
	}
	for n, a := range w.accounts {
		if a.pub == kept {
			if got := claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(w.addAccount(n, nil).jwt)); !strings.Contains(got, "jwt updated cache") {
				t.Fatalf("push %s: %s", n, got)
			}
		}
	}
}

// TestJWTResolverReloadKeepsPushes checks that a config reload, whose
// resolver_preload has an older JWT of a pushed account, keeps the
// pushed one in force and in the store, as the reference stores a
// preloaded JWT only when it is newer.
func TestJWTResolverReloadKeepsPushes(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	a := w.addAccount("A", nil)
	older := a.jwt
	time.Sleep(1100 * time.Millisecond) // a JWT's issue time has a resolution of a second: the push must be newer
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Limits.Payload = 500 })
	sysCreds, _ := w.user("SYS", nil, nil)
	credsA, _ := w.user("A", nil, nil)
	opts := w.resolverOptions(t.TempDir(), "SYS")
	opts.Operator.Accounts[a.pub] = older
	opts.StoreDir = t.TempDir()
	bus := startBus(t, opts)
	sys := connect(t, busURL(bus), nats.UserCredentials(sysCreds))
	if got := claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(a.jwt)); !strings.Contains(got, "jwt updated") {
		t.Fatalf("push: %s", got)
	}
	if err := bus.Reload(opts); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(bus), nats.UserCredentials(credsA))
	if !waitFor(2*time.Second, func() bool { _ = nc.Flush(); return nc.MaxPayload() == 500 }) {
		t.Fatalf("max payload after reload %d, want the pushed JWT's 500", nc.MaxPayload())
	}
}
