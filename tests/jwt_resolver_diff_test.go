package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// resolverConfig is operator mode with a full NATS resolver in dir for
// the reference, with the JWTs of preload (test names) preloaded.
func (w *jwtWorld) resolverConfig(dir string, preload ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "host: 127.0.0.1\nport: -1\noperator: %s\nsystem_account: %s\nstore_dir: %%q\n", w.opJWT, w.sysKey)
	fmt.Fprintf(&b, "resolver: { type: full, dir: %q, allow_delete: true }\nresolver_preload: {\n", dir)
	for _, n := range preload {
		fmt.Fprintf(&b, "  %s: %s\n", w.accounts[n].pub, w.accounts[n].jwt)
	}
	b.WriteString("}\n")
	return b.String()
}

// resolverOptions is the same for bus.
func (w *jwtWorld) resolverOptions(dir string, preload ...string) server.Options {
	o := &server.Operator{JWTs: []string{w.opJWT}, SystemAccount: w.sysKey, Accounts: map[string]string{},
		Resolver: &server.Resolver{Type: server.ResolverFull, Dir: dir, AllowDelete: true}}
	for _, n := range preload {
		o.Accounts[w.accounts[n].pub] = w.accounts[n].jwt
	}
	return server.Options{Host: "127.0.0.1", Operator: o}
}

// claimsAnswer is a resolver request's answer without the server
// envelope, which names the server.
func claimsAnswer(t *testing.T, nc *nats.Conn, subject string, body []byte) string {
	t.Helper()
	m, err := nc.Request(subject, body, 2*time.Second)
	if err != nil {
		return "error: " + err.Error()
	}
	var v map[string]any
	if err := json.Unmarshal(m.Data, &v); err != nil {
		return "not JSON: " + string(m.Data)
	}
	delete(v, "server")
	out, _ := json.Marshal(v)
	return string(out)
}

// TestJWTResolverUpdates checks the full NATS resolver against the
// reference: accounts pushed with $SYS.REQ.CLAIMS.UPDATE (and the
// per-account subject) work at once; a revocation and a new export and
// import pushed live close the revoked user's connection and start the
// import; LOOKUP and LIST show the store; bad pushes get the
// reference's errors; DELETE removes an account and closes its users.
func TestJWTResolverUpdates(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	a := w.addAccount("A", nil)
	b := w.addAccount("B", nil)
	sysCreds, _ := w.user("SYS", nil, nil)
	victim, victimPub := w.user("A", nil, nil)
	keeper, _ := w.user("A", nil, nil)
	credsB, _ := w.user("B", nil, nil)
	firstA, firstB := a.jwt, b.jwt
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.RevokeAt(victimPub, time.Now().Add(time.Second))
		ac.Exports.Add(&jwt.Export{Subject: "events.>", Type: jwt.Stream})
	})
	w.addAccount("B", func(ac *jwt.AccountClaims) {
		ac.Imports.Add(&jwt.Import{Subject: "events.>", Account: a.pub, Type: jwt.Stream})
	})
	secondA, secondB := a.jwt, b.jwt
	del := jwt.NewGenericClaims(w.opJWTSubject())
	del.Data["accounts"] = []any{b.pub}
	deleteToken, err := del.Encode(w.operator)
	if err != nil {
		t.Fatal(err)
	}

	busDir, refDir := t.TempDir(), t.TempDir()
	bus := startBus(t, w.resolverOptions(busDir, "SYS"))
	ref, _ := startReferenceFile(t, w.resolverConfig(refDir, "SYS"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		sys := connect(t, url, nats.UserCredentials(sysCreds))
		steps := []string{
			"B before its push: " + connectErr(url, nats.UserCredentials(credsB)),
			"push A: " + claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(firstA)),
			"push B on its subject: " + claimsAnswer(t, sys, "$SYS.REQ.ACCOUNT."+b.pub+".CLAIMS.UPDATE", []byte(firstB)),
			"push B on A's subject: " + claimsAnswer(t, sys, "$SYS.REQ.ACCOUNT."+a.pub+".CLAIMS.UPDATE", []byte(firstB)),
			"push garbage: " + claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte("not a jwt")),
		}
		closed := make(chan struct{})
		victimErrs := make(chan error, 4)
		v := connect(t, url, nats.UserCredentials(victim), nats.NoReconnect(),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { victimErrs <- err }),
			nats.ClosedHandler(func(nc *nats.Conn) { close(closed) }))
		k := connect(t, url, nats.UserCredentials(keeper), nats.NoReconnect())
		bErrs := make(chan error, 4)
		nb := connect(t, url, nats.UserCredentials(credsB), nats.NoReconnect(),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { bErrs <- err }))
		sub, _ := nb.SubscribeSync("events.>")
		nb.Flush()
		v.Flush()
		k.Publish("events.before", nil)
		k.Flush()
		steps = append(steps, fmt.Sprintf("import before the update: %q", received(t, sub, 200*time.Millisecond)))
		steps = append(steps,
			"push A revoking and exporting: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(secondA)),
			"push B importing: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(secondB)))
		select {
		case <-closed:
			steps = append(steps, "victim closed: "+firstErr(victimErrs))
		case <-time.After(5 * time.Second):
			steps = append(steps, "victim still connected")
		}
		delivered := waitFor(5*time.Second, func() bool {
			k.Publish("events.after", nil)
			_, err := sub.NextMsg(50 * time.Millisecond)
			return err == nil
		})
		steps = append(steps, fmt.Sprintf("import after the update: %v", delivered),
			"keeper: "+fmt.Sprint(k.Flush()),
			"victim again: "+connectErr(url, nats.UserCredentials(victim)))
		lookup, err := sys.Request("$SYS.REQ.ACCOUNT."+a.pub+".CLAIMS.LOOKUP", nil, 2*time.Second)
		steps = append(steps, fmt.Sprintf("lookup A is the last push: %v %v", err, err == nil && string(lookup.Data) == secondA))
		missing, err := sys.Request("$SYS.REQ.ACCOUNT.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.CLAIMS.LOOKUP", nil, time.Second)
		steps = append(steps, fmt.Sprintf("lookup of none: %v %q", err, dataOf(missing)))
		var list struct{ Data []string }
		lm, err := sys.Request("$SYS.REQ.CLAIMS.LIST", nil, 2*time.Second)
		if err == nil {
			err = json.Unmarshal(lm.Data, &list)
		}
		slices.Sort(list.Data)
		want := []string{w.sysKey, a.pub, b.pub}
		slices.Sort(want)
		steps = append(steps, fmt.Sprintf("list: %v %v", err, slices.Equal(list.Data, want)))
		bClosed := make(chan struct{})
		nb.SetClosedHandler(func(*nats.Conn) { close(bClosed) })
		steps = append(steps, "delete B: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.DELETE", []byte(deleteToken)))
		select {
		case <-bClosed:
			steps = append(steps, "B's user closed: "+firstErr(bErrs))
		case <-time.After(5 * time.Second):
			steps = append(steps, "B's user still connected")
		}
		steps = append(steps, "B after its delete: "+connectErr(url, nats.UserCredentials(credsB)))
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
	// The same directory layout: <key>.jwt, and B's renamed.
	for _, dir := range []string{busDir, refDir} {
		for _, name := range []string{a.pub + ".jwt", w.sysKey + ".jwt", b.pub + ".jwt.deleted"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: %v", dir, err)
			}
		}
	}
}

// firstErr is the first asynchronous error a connection reported.
func firstErr(errs chan error) string {
	select {
	case err := <-errs:
		return strings.ToLower(err.Error())
	default:
		return "none"
	}
}

func dataOf(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}

// opJWTSubject is the operator's public key.
func (w *jwtWorld) opJWTSubject() string {
	pub, _ := w.operator.PublicKey()
	return pub
}

// TestJWTResolverLowersConnectionLimit checks a pushed account JWT with
// a lower conn limit: the newest connections over it are closed with
// the reference's error, the oldest stay.
func TestJWTResolverLowersConnectionLimit(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	sysCreds, _ := w.user("SYS", nil, nil)
	credsA, _ := w.user("A", nil, nil)
	first := w.accounts["A"].jwt
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Limits.Conn = 1 })
	lowered := w.accounts["A"].jwt
	bus := startBus(t, w.resolverOptions(t.TempDir(), "SYS"))
	ref, _ := startReferenceFile(t, w.resolverConfig(t.TempDir(), "SYS"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		sys := connect(t, url, nats.UserCredentials(sysCreds))
		steps := []string{"push A: " + claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(first))}
		var conns []*nats.Conn
		for range 3 {
			nc := connect(t, url, nats.UserCredentials(credsA), nats.NoReconnect())
			nc.Flush()
			conns = append(conns, nc)
		}
		steps = append(steps, "push A with conn 1: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(lowered)))
		for i, nc := range conns {
			waitFor(2*time.Second, func() bool { return i == 0 || nc.IsClosed() })
			steps = append(steps, fmt.Sprintf("conn %d closed %v: %v", i, nc.IsClosed(), nc.LastError()))
		}
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}

// TestJWTResolverPushesJetStreamAccount checks, on bus and the
// reference alike, that an account pushed with JetStream limits has its
// JetStream at once, bounded by them, and that a push raising its
// max_streams applies at once too.
func TestJWTResolverPushesJetStreamAccount(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: 1, Consumer: -1}
	})
	pushed := w.accounts["A"].jwt
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Limits.JetStreamLimits.Streams = 5 })
	changed := w.accounts["A"].jwt
	sysCreds, _ := w.user("SYS", nil, nil)
	credsA, _ := w.user("A", nil, nil)
	opts := w.resolverOptions(t.TempDir(), "SYS")
	opts.JetStream = true
	bus := startBus(t, opts)
	ref, _ := startReferenceFile(t, "jetstream: enabled\n"+w.resolverConfig(t.TempDir(), "SYS"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		sys := connect(t, url, nats.UserCredentials(sysCreds))
		steps := []string{"push A: " + claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(pushed))}
		nc := connect(t, url, nats.UserCredentials(credsA))
		js, _ := nc.JetStream()
		for _, name := range []string{"S1", "S2"} {
			_, err := js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: nats.MemoryStorage})
			steps = append(steps, name+": "+fmt.Sprint(err))
		}
		steps = append(steps, "push A with 5 streams: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(changed)))
		_, err := js.AddStream(&nats.StreamConfig{Name: "S2", Subjects: []string{"S2.>"}, Storage: nats.MemoryStorage})
		steps = append(steps, "S2 again: "+fmt.Sprint(err))
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}

// TestJWTMemoryResolverUpdates checks the MEMORY resolver's updates
// against the reference: $SYS.REQ.ACCOUNT.<key>.CLAIMS.UPDATE applies a
// new JWT of an account it has (a revocation closes the user), skips an
// account it has not, and refuses an empty body.
func TestJWTMemoryResolverUpdates(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	a := w.addAccount("A", nil)
	sysCreds, _ := w.user("SYS", nil, nil)
	victim, victimPub := w.user("A", nil, nil)
	p := startJWTPair(t, w)
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.RevokeAt(victimPub, time.Now().Add(time.Second)) })
	w.addAccount("Z", nil)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		sys := connect(t, url, nats.UserCredentials(sysCreds))
		errs := make(chan error, 4)
		closed := make(chan struct{})
		connect(t, url, nats.UserCredentials(victim), nats.NoReconnect(),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }),
			nats.ClosedHandler(func(*nats.Conn) { close(closed) })).Flush()
		steps := []string{
			"empty: " + claimsAnswer(t, sys, "$SYS.REQ.ACCOUNT."+a.pub+".CLAIMS.UPDATE", nil),
			"unknown account: " + claimsAnswer(t, sys, "$SYS.REQ.ACCOUNT."+w.accounts["Z"].pub+".CLAIMS.UPDATE", []byte(w.accounts["Z"].jwt)),
			"revoking A: " + claimsAnswer(t, sys, "$SYS.REQ.ACCOUNT."+a.pub+".CLAIMS.UPDATE", []byte(a.jwt)),
		}
		select {
		case <-closed:
			steps = append(steps, "victim closed: "+firstErr(errs))
		case <-time.After(5 * time.Second):
			steps = append(steps, "victim still connected")
		}
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}

// TestJWTCacheResolverUpdates checks a cache resolver's answers against
// the reference: an update of an account in use, one it has not
// (skipped: a cache learns accounts from lookups, which a single server
// cannot make), and no LOOKUP service.
func TestJWTCacheResolverUpdates(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	w.addAccount("B", nil)
	sysCreds, _ := w.user("SYS", nil, nil)
	credsA, _ := w.user("A", nil, nil)
	opts := w.resolverOptions(t.TempDir(), "SYS", "A")
	opts.Operator.Resolver = &server.Resolver{Type: server.ResolverCache, Dir: opts.Operator.Resolver.Dir}
	bus := startBus(t, opts)
	config := strings.Replace(w.resolverConfig(t.TempDir(), "SYS", "A"), "type: full", "type: cache", 1)
	config = strings.Replace(config, ", allow_delete: true", "", 1)
	ref, _ := startReferenceFile(t, config)
	updatedA := w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Limits.Payload = 900 }).jwt
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		sys := connect(t, url, nats.UserCredentials(sysCreds))
		// The reference updates only accounts in use (bus: every account
		// it has a JWT of).
		connect(t, url, nats.UserCredentials(credsA)).Flush()
		_, lookupErr := sys.Request("$SYS.REQ.ACCOUNT."+w.accounts["A"].pub+".CLAIMS.LOOKUP", nil, 500*time.Millisecond)
		steps := []string{
			"update A: " + claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(updatedA)),
			"update B: " + claimsAnswer(t, sys, "$SYS.REQ.ACCOUNT."+w.accounts["B"].pub+".CLAIMS.UPDATE", []byte(w.accounts["B"].jwt)),
			"garbage: " + claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte("x")),
			"lookup: " + fmt.Sprint(lookupErr),
		}
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}
