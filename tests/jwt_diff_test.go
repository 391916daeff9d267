package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// connectErr is how a connection attempt with opts ended, in words that
// are the same on both servers.
func connectErr(url string, opts ...nats.Option) string {
	nc, err := nats.Connect(url, append([]nats.Option{nats.NoReconnect(), nats.MaxReconnects(0)}, opts...)...)
	if err != nil {
		return "refused: " + strings.ToLower(err.Error())
	}
	nc.Close()
	return "connected"
}

// TestJWTAccountsIsolated checks that two JWT accounts are subject spaces
// of their own, both ways, and that a user with credentials of no
// trusted account is refused.
func TestJWTAccountsIsolated(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	w.addAccount("B", nil)
	credsA, _ := w.user("A", nil, nil)
	credsB, _ := w.user("B", nil, nil)
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		a := connect(t, url, nats.UserCredentials(credsA))
		b := connect(t, url, nats.UserCredentials(credsB))
		subA, _ := a.SubscribeSync(">")
		subB, _ := b.SubscribeSync(">")
		a.Flush()
		b.Flush()
		a.Publish("from.a", []byte("a"))
		b.Publish("from.b", []byte("b"))
		a.Flush()
		b.Flush()
		return []string{
			"A: " + strings.Join(received(t, subA, 300*time.Millisecond), ", "),
			"B: " + strings.Join(received(t, subB, 300*time.Millisecond), ", "),
			"no creds: " + connectErr(url),
		}
	})
}

// TestJWTUserRefusals checks the users bus must refuse as the reference
// does: an expired JWT, one not yet valid, a wrong signature (the seed of
// another user), an account nobody trusts, a revoked user; and that a
// bearer token needs no signature.
func TestJWTUserRefusals(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	expired, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(-time.Hour).Unix() })
	early, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.NotBefore = time.Now().Add(time.Hour).Unix() })
	bearer, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.BearerToken = true })
	good, _ := w.user("A", nil, nil)
	revokedCreds, revokedPub := w.user("A", nil, nil)
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Revoke(revokedPub) })

	// A user signed by an account that is not in the resolver.
	stranger, _ := nkeys.CreateAccount()
	upub := func() (nkeys.KeyPair, string) {
		kp, _ := nkeys.CreateUser()
		p, _ := kp.PublicKey()
		return kp, p
	}
	ukp, up := upub()
	strangerJWT, _ := jwt.NewUserClaims(up).Encode(stranger)
	useed, _ := ukp.Seed()

	// A good JWT with another user's seed: the signature is wrong.
	otherKP, _ := nkeys.CreateUser()
	goodJWT, err := jwt.ParseDecoratedJWT(readFile(t, good))
	if err != nil {
		t.Fatal(err)
	}
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		return []string{
			"good: " + connectErr(url, nats.UserCredentials(good)),
			"expired: " + connectErr(url, nats.UserCredentials(expired)),
			"not yet valid: " + connectErr(url, nats.UserCredentials(early)),
			"bearer without signature: " + connectErr(url, nats.UserJWT(func() (string, error) { return jwtOf(t, bearer), nil },
				func([]byte) ([]byte, error) { return nil, nil })),
			"wrong signature: " + connectErr(url, nats.UserJWT(func() (string, error) { return goodJWT, nil },
				func(n []byte) ([]byte, error) { return otherKP.Sign(n) })),
			"unknown account: " + connectErr(url, nats.UserJWTAndSeed(strangerJWT, string(useed))),
			"revoked: " + connectErr(url, nats.UserCredentials(revokedCreds)),
		}
	})
}

// TestJWTUserPermissions checks that a user JWT's pub/sub allow and deny
// lists apply, with the reference's permissions violations, and that a
// scoped signing key's template replaces the user's own permissions.
func TestJWTUserPermissions(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	scopedKP, _ := nkeys.CreateAccount()
	scopedPub, _ := scopedKP.PublicKey()
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		scope := jwt.NewUserScope()
		scope.Key = scopedPub
		scope.Template.Pub.Allow.Add("scoped.>")
		scope.Template.Sub.Allow.Add("_INBOX.>")
		ac.SigningKeys.AddScopedSigner(scope)
	})
	limited, _ := w.user("A", nil, func(uc *jwt.UserClaims) {
		uc.Pub.Allow.Add("ok.>")
		uc.Pub.Deny.Add("ok.no")
		uc.Sub.Allow.Add("ok.>", "_INBOX.>")
	})
	// A scoped key's user says nothing of its own, not even nsc's
	// "no limit" defaults.
	scoped, _ := w.user("A", scopedKP, func(uc *jwt.UserClaims) { uc.UserPermissionLimits = jwt.UserPermissionLimits{} })
	scopedWithOwn, _ := w.user("A", scopedKP, func(uc *jwt.UserClaims) { uc.Pub.Allow.Add(">") })
	watcher, _ := w.user("A", nil, nil)
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		errs := make(chan string, 16)
		handler := nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- strings.ToLower(err.Error()) })
		all := connect(t, url, nats.UserCredentials(watcher))
		sub, _ := all.SubscribeSync(">")
		all.Flush()
		nc := connect(t, url, nats.UserCredentials(limited), handler)
		for _, s := range []string{"ok.yes", "ok.no", "other"} {
			nc.Publish(s, []byte("l"))
		}
		nc.SubscribeSync("other")
		nc.Flush()
		sc := connect(t, url, nats.UserCredentials(scoped), handler)
		for _, s := range []string{"scoped.yes", "ok.yes2"} {
			sc.Publish(s, []byte("s"))
		}
		sc.Flush()
		steps := []string{"watcher: " + strings.Join(received(t, sub, 300*time.Millisecond), ", ")}
		for range 4 {
			select {
			case e := <-errs:
				steps = append(steps, e)
			case <-time.After(2 * time.Second):
				steps = append(steps, "no error")
			}
		}
		// The order the violations arrive in across two connections
		// is not fixed; compare them as a set.
		sortStrings(steps[1:])
		return append(steps, "scoped user with permissions of its own: "+connectErr(url, nats.UserCredentials(scopedWithOwn)))
	})
}

// TestJWTAccountLimits checks an account JWT's conn and payload limits,
// with the reference's errors.
func TestJWTAccountLimits(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Limits.Conn = 1
		ac.Limits.Payload = 100
	})
	creds, _ := w.user("A", nil, nil)
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		nc := connect(t, url, nats.UserCredentials(creds))
		second := connectErr(url, nats.UserCredentials(creds))
		big := nc.Publish("big", make([]byte, 200))
		return []string{"second: " + second, fmt.Sprintf("big: %v max %d", big, nc.MaxPayload())}
	})
}

// TestJWTExportImport checks a public stream export and service export of
// one JWT account imported by another.
func TestJWTExportImport(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	a := w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Exports.Add(&jwt.Export{Subject: "events.>", Type: jwt.Stream}, &jwt.Export{Subject: "svc.time", Type: jwt.Service})
	})
	w.addAccount("B", func(ac *jwt.AccountClaims) {
		ac.Imports.Add(&jwt.Import{Subject: "events.>", Account: a.pub, Type: jwt.Stream},
			&jwt.Import{Subject: "svc.time", Account: a.pub, Type: jwt.Service})
	})
	credsA, _ := w.user("A", nil, nil)
	credsB, _ := w.user("B", nil, nil)
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		na := connect(t, url, nats.UserCredentials(credsA))
		nb := connect(t, url, nats.UserCredentials(credsB))
		na.Subscribe("svc.time", func(m *nats.Msg) { m.Respond([]byte("noon")) })
		na.Flush()
		sub, _ := nb.SubscribeSync("events.>")
		nb.Flush()
		eventually(t, 5*time.Second, func() bool {
			na.Publish("events.x", []byte("e"))
			_, err := sub.NextMsg(50 * time.Millisecond)
			return err == nil
		})
		resp, err := nb.Request("svc.time", nil, 2*time.Second)
		got := fmt.Sprint(err)
		if err == nil {
			got = string(resp.Data)
		}
		return []string{"stream: delivered", "service: " + got}
	})
}

// TestJWTReloadRevokes checks that a MEMORY resolver reload with an
// updated account JWT applies live: a revoked user's connection is
// closed and it cannot come back, another user stays, and the new
// payload limit holds for new connections.
func TestJWTReloadRevokes(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	victim, victimPub := w.user("A", nil, nil)
	keeper, _ := w.user("A", nil, nil)
	opts := w.busOptions()
	opts.Host, opts.StoreDir = "127.0.0.1", t.TempDir()
	bus := startBus(t, opts)
	ref, path := startReferenceFile(t, w.referenceConfig(""))
	// The revocation must be later than the user JWT's issue time,
	// which has a resolution of a second.
	revokeAt := time.Now().Add(2 * time.Second)
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.RevokeAt(victimPub, revokeAt)
		ac.Limits.Payload = 100
	})
	reloads := map[string]func(t *testing.T){
		"bus": func(t *testing.T) {
			o := w.busOptions()
			o.Host, o.StoreDir = opts.Host, opts.StoreDir
			if err := bus.Reload(o); err != nil {
				t.Fatal(err)
			}
		},
		"reference": func(t *testing.T) {
			writeReferenceConfig(t, path, w.referenceConfig(""))
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
			closed := make(chan struct{})
			var lastErr error
			v := connect(t, url, nats.UserCredentials(victim), nats.NoReconnect(),
				nats.ClosedHandler(func(nc *nats.Conn) { lastErr = nc.LastError(); close(closed) }))
			k := connect(t, url, nats.UserCredentials(keeper), nats.NoReconnect())
			v.Flush()
			reloads[side](t)
			var steps []string
			select {
			case <-closed:
				steps = append(steps, "victim closed: "+strings.ToLower(fmt.Sprint(lastErr)))
			case <-time.After(5 * time.Second):
				steps = append(steps, "victim still connected")
			}
			steps = append(steps, "keeper: "+fmt.Sprint(k.Flush()))
			steps = append(steps, "victim again: "+connectErr(url, nats.UserCredentials(victim)))
			k2 := connect(t, url, nats.UserCredentials(keeper))
			// Both servers tell the account's payload limit in an INFO
			// after the connect handshake.
			waitFor(2*time.Second, func() bool { _ = k2.Flush(); return k2.MaxPayload() == 100 })
			steps = append(steps, fmt.Sprintf("new payload limit: %d", k2.MaxPayload()))
			outcomes[side] = steps
		})
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
}

// TestJWTUserLimits checks a user JWT's src, times and subs limits and
// allowed_connection_types, with the reference's outcomes.
func TestJWTUserLimits(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	local, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Src.Set("127.0.0.0/8") })
	remote, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Src.Set("10.0.0.0/8") })
	now := time.Now().UTC()
	inTime, _ := w.user("A", nil, func(uc *jwt.UserClaims) {
		uc.Locale = "UTC"
		uc.Times = []jwt.TimeRange{{Start: now.Add(-time.Hour).Format(time.TimeOnly), End: now.Add(time.Hour).Format(time.TimeOnly)}}
	})
	outTime, _ := w.user("A", nil, func(uc *jwt.UserClaims) {
		uc.Locale = "UTC"
		uc.Times = []jwt.TimeRange{{Start: now.Add(2 * time.Hour).Format(time.TimeOnly), End: now.Add(3 * time.Hour).Format(time.TimeOnly)}}
	})
	wsOnly, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.AllowedConnectionTypes.Add(jwt.ConnectionTypeWebsocket) })
	oneSub, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Subs = 1 })
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		errs := make(chan error, 4)
		nc := connect(t, url, nats.UserCredentials(oneSub), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
		nc.SubscribeSync("a")
		nc.SubscribeSync("b")
		nc.Flush()
		subErr := "no error"
		select {
		case err := <-errs:
			subErr = strings.ToLower(err.Error())
		case <-time.After(3 * time.Second):
		}
		return []string{
			"src local: " + connectErr(url, nats.UserCredentials(local)),
			"src remote: " + connectErr(url, nats.UserCredentials(remote)),
			"in time: " + connectErr(url, nats.UserCredentials(inTime)),
			"out of time: " + connectErr(url, nats.UserCredentials(outTime)),
			"websocket only: " + connectErr(url, nats.UserCredentials(wsOnly)),
			"second sub: " + subErr,
		}
	})
}

// TestJWTJetStream checks that an account JWT's JetStream limits give the
// account a JetStream of its own, bounded by them, and that an account
// JWT without them has none.
func TestJWTJetStream(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: 1, Consumer: -1}
	})
	w.addAccount("B", nil)
	credsA, _ := w.user("A", nil, nil)
	credsB, _ := w.user("B", nil, nil)
	opts := w.busOptions()
	opts.JetStream = true
	bus := startBus(t, opts)
	ref, _ := startReferenceFile(t, w.referenceConfig("jetstream: enabled"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		create := func(creds, name string) string {
			nc := connect(t, url, nats.UserCredentials(creds))
			js, err := nc.JetStream()
			if err != nil {
				return err.Error()
			}
			_, err = js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: nats.MemoryStorage})
			return fmt.Sprint(err)
		}
		steps := []string{
			"A first: " + create(credsA, "S1"),
			"A second: " + create(credsA, "S2"),
			"B: " + create(credsB, "S3"),
		}
		return steps
	})
}

// TestJWTAccountDefaultsAndMappings checks an account JWT's
// default_permissions (for users with none of their own) and mappings.
func TestJWTAccountDefaultsAndMappings(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.DefaultPermissions.Pub.Deny.Add("secret.>")
		ac.Mappings = jwt.Mapping{"old.*": {{Subject: "new.$1", Weight: 100}}}
	})
	plain, _ := w.user("A", nil, nil)
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		errs := make(chan string, 4)
		nc := connect(t, url, nats.UserCredentials(plain), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- strings.ToLower(err.Error()) }))
		sub, _ := nc.SubscribeSync(">")
		nc.Flush()
		nc.Publish("old.x", []byte("m"))
		nc.Publish("secret.x", []byte("s"))
		nc.Flush()
		steps := []string{"got: " + strings.Join(received(t, sub, 300*time.Millisecond), ", ")}
		select {
		case e := <-errs:
			steps = append(steps, e)
		case <-time.After(2 * time.Second):
			steps = append(steps, "no error")
		}
		return steps
	})
}

// TestJWTUserPayload checks a user JWT's payload limit: nats.go learns it
// from the INFO after CONNECT, as from the reference, and refuses a
// publish over it itself.
func TestJWTUserPayload(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	small, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Limits.Payload = 100 })
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		nc := connect(t, url, nats.UserCredentials(small))
		nc.Flush()
		return []string{fmt.Sprintf("max %d, publish over it: %v", nc.MaxPayload(), nc.Publish("big", make([]byte, 200)))}
	})
}

// TestJWTConnzNameTag checks that /connz?auth=true names a JWT user's
// account by its public key, with the account JWT's name as name_tag.
func TestJWTConnzNameTag(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Name = "team-a" })
	creds, _ := w.user("A", nil, nil)
	opts := w.busOptions()
	opts.HTTPPort = -1
	bus := startBus(t, opts)
	ref, _ := startReferenceFile(t, w.referenceConfig("http_port: -1"))
	for _, side := range []struct{ url, http string }{
		{busURL(bus), "http://" + bus.HTTPAddr().String()},
		{ref.ClientURL(), "http://" + ref.MonitorAddr().String()},
	} {
		connect(t, side.url, nats.UserCredentials(creds))
		var body struct {
			Conns []struct {
				Account string `json:"account"`
				NameTag string `json:"name_tag"`
			} `json:"connections"`
		}
		getJSON(t, side.http+"/connz?auth=true", &body)
		if len(body.Conns) != 1 || body.Conns[0].Account != w.accounts["A"].pub || body.Conns[0].NameTag != "team-a" {
			t.Errorf("%s: %+v", side.http, body.Conns)
		}
	}
}

// TestJWTUserExpiresWhileConnected checks that a connection is closed,
// with the reference's error, when its user JWT expires.
func TestJWTUserExpiresWhileConnected(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		creds, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(2 * time.Second).Unix() })
		errs := make(chan error, 4)
		closed := make(chan struct{})
		connect(t, url, nats.UserCredentials(creds), nats.NoReconnect(),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }),
			nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			return []string{"still connected"}
		}
		select {
		case err := <-errs:
			return []string{"closed: " + strings.ToLower(err.Error())}
		case <-time.After(2 * time.Second):
			return []string{"closed without error"}
		}
	})
}

// TestJWTSystemAccount checks that a user of the system account's JWT is
// in the system account: the $SYS.REQ.SERVER.PING survey answers it.
func TestJWTSystemAccount(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	sys, _ := w.user("SYS", nil, nil)
	app, _ := w.user("A", nil, nil)
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		ask := func(creds string) string {
			nc := connect(t, url, nats.UserCredentials(creds))
			_, err := nc.Request("$SYS.REQ.SERVER.PING", nil, time.Second)
			return fmt.Sprint(err)
		}
		return []string{"sys: " + ask(sys), "app: " + ask(app)}
	})
}
