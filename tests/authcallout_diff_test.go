package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// appUser is the decision that lets a client into APP, where it may
// publish and subscribe under app.> only.
func appUser(*jwt.AuthorizationRequestClaims) decision {
	return decision{account: "APP", edit: func(uc *jwt.UserClaims) {
		uc.Pub.Allow.Add("app.>")
		uc.Sub.Allow.Add("app.>", "_INBOX.>")
	}}
}

// pubSubOutcome reports what a client let in may do: a message to
// itself on app.in, and a publish outside its permissions.
func pubSubOutcome(t *testing.T, nc *nats.Conn, errs <-chan error) []string {
	t.Helper()
	var out []string
	sub, err := nc.SubscribeSync("app.in")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("app.in", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(2 * time.Second); err != nil {
		out = append(out, "app.in: "+err.Error())
	} else {
		out = append(out, "app.in: "+string(m.Data))
	}
	if err := nc.Publish("forbidden", nil); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	select {
	case err := <-errs:
		out = append(out, "async: "+err.Error())
	case <-time.After(2 * time.Second):
		out = append(out, "async: none")
	}
	return out
}

// asyncErrors is an error handler sending to a channel.
func asyncErrors() (nats.Option, <-chan error) {
	errs := make(chan error, 8)
	return nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case errs <- err:
		default:
		}
	}), errs
}

// TestAuthCalloutMatchesReference runs each decision of the service
// against bus and the reference with the same config, with and without
// xkey encryption, and compares what the client sees.
func TestAuthCalloutMatchesReference(t *testing.T) {
	t.Parallel()
	other, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	otherUser, _ := nkeys.CreateUser()
	otherUserKey, _ := otherUser.PublicKey()
	alice := nats.UserInfo("alice", "secret")
	scenarios := []struct {
		name   string
		decide func(*jwt.AuthorizationRequestClaims) decision
		opts   []nats.Option
		// after runs once the client is in; nil: report the connect only.
		after func(t *testing.T, nc *nats.Conn, errs <-chan error) []string
	}{
		{name: "allow with permissions", decide: appUser, opts: []nats.Option{alice}, after: pubSubOutcome},
		{name: "allow without credentials", decide: appUser},
		{name: "allow by token", decide: appUser, opts: []nats.Option{nats.Token("t0k3n")}},
		{name: "deny with error text", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{errText: "bad password for alice"}
		}, opts: []nats.Option{alice}},
		{name: "unknown account", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{account: "NOPE"}
		}, opts: []nats.Option{alice}},
		{name: "no account", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{}
		}, opts: []nats.Option{alice}},
		{name: "expired user", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{account: "APP", edit: func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(-time.Minute).Unix() }}
		}, opts: []nats.Option{alice}},
		{name: "user signed by another account", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{account: "APP", signer: other}
		}, opts: []nats.Option{alice}},
		{name: "user JWT for another user", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{account: "APP", edit: func(uc *jwt.UserClaims) { uc.Subject = otherUserKey }}
		}, opts: []nats.Option{alice}},
		{name: "empty response", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{respond: func([]byte) []byte { return nil }}
		}, opts: []nats.Option{alice}},
		{name: "garbage response", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{respond: func([]byte) []byte { return []byte("eyJnot a jwt") }}
		}, opts: []nats.Option{alice}},
		{name: "service silent", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{silent: true}
		}, opts: []nats.Option{alice}},
		{name: "connection types", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{account: "APP", edit: func(uc *jwt.UserClaims) { uc.AllowedConnectionTypes.Add(jwt.ConnectionTypeWebsocket) }}
		}, opts: []nats.Option{alice}},
		{name: "callout account user may not send requests", decide: func(*jwt.AuthorizationRequestClaims) decision {
			return decision{account: "AUTH"}
		}, opts: []nats.Option{alice}, after: func(t *testing.T, nc *nats.Conn, errs <-chan error) []string {
			if err := nc.Publish("$SYS.REQ.USER.AUTH", []byte("x")); err != nil {
				t.Fatal(err)
			}
			_ = nc.Flush()
			select {
			case err := <-errs:
				return []string{"async: " + err.Error()}
			case <-time.After(2 * time.Second):
				return []string{"async: none"}
			}
		}},
	}
	for _, xkey := range []bool{false, true} {
		t.Run(fmt.Sprintf("xkey=%v", xkey), func(t *testing.T) {
			t.Parallel()
			p := startCalloutPair(t, newCalloutWorld(t, xkey))
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					calloutBothSides(t, p, func(t *testing.T, url string) []string {
						p.w.serve(t, url, sc.decide)
						handler, errs := asyncErrors()
						nc, outcome := calloutClient(t, url, append(sc.opts, handler)...)
						out := []string{outcome}
						if nc != nil && sc.after != nil {
							out = append(out, sc.after(t, nc, errs)...)
						}
						return out
					})
				})
			}
		})
	}
}

// TestAuthCalloutRequestMatchesReference compares the request the
// service gets from bus and from the reference: who signed it, for whom,
// and what it says of the client.
func TestAuthCalloutRequestMatchesReference(t *testing.T) {
	t.Parallel()
	p := startCalloutPair(t, newCalloutWorld(t, true))
	ids := map[string]string{busURL(p.bus): p.bus.ID(), p.ref.ClientURL(): p.ref.ID()}
	calloutBothSides(t, p, func(t *testing.T, url string) []string {
		svc := p.w.serve(t, url, appUser)
		if _, outcome := calloutClient(t, url, nats.UserInfo("alice", "secret"), nats.Name("alice-app")); outcome != "connected" {
			t.Fatal(outcome)
		}
		r := svc.last(t)
		return []string{
			"issuer is the server: " + fmt.Sprint(r.Issuer == ids[url]),
			"server id: " + fmt.Sprint(r.Server.ID == ids[url]),
			"subject is the issuer: " + fmt.Sprint(r.Subject == p.w.issuerPub),
			"audience: " + r.Audience,
			"user nkey: " + fmt.Sprint(nkeys.IsValidPublicUserKey(r.UserNkey)),
			"expires: " + fmt.Sprint(r.Expires > time.Now().Unix() && r.Expires <= time.Now().Add(2*time.Second).Unix()),
			"server xkey: " + fmt.Sprint(nkeys.IsValidPublicCurveKey(r.Server.XKey)),
			"client: " + fmt.Sprintf("%s %s %s %s host=%v id=%v", r.ClientInformation.User, r.ClientInformation.Name,
				r.ClientInformation.Kind, r.ClientInformation.Type, r.ClientInformation.Host == "127.0.0.1", r.ClientInformation.ID > 0),
			"connect: " + fmt.Sprintf("%s %s %s %s %d", r.ConnectOptions.Username, r.ConnectOptions.Password,
				r.ConnectOptions.Name, r.ConnectOptions.Lang, r.ConnectOptions.Protocol),
			"tls: " + fmt.Sprint(r.TLS != nil),
		}
	})
}

// An auth user skips the callout; with a wrong password it is refused
// without the callout being asked, as in the reference.
func TestAuthCalloutAuthUsersSkipIt(t *testing.T) {
	t.Parallel()
	p := startCalloutPair(t, newCalloutWorld(t, false))
	calloutBothSides(t, p, func(t *testing.T, url string) []string {
		svc := p.w.serve(t, url, appUser)
		_, good := calloutClient(t, url, nats.UserInfo("auth", calloutPass))
		_, bad := calloutClient(t, url, nats.UserInfo("auth", "wrong"))
		return []string{good, bad, fmt.Sprintf("requests: %d", svc.seen())}
	})
}

// By default (as in the reference, nats-server #8044) a configured user
// outside auth_users goes through the callout too: the service refusing
// "backend" keeps it out although its password is right.
func TestAuthCalloutSeesConfiguredUsers(t *testing.T) {
	t.Parallel()
	p := startCalloutPair(t, newCalloutWorld(t, false))
	calloutBothSides(t, p, func(t *testing.T, url string) []string {
		svc := p.w.serve(t, url, func(r *jwt.AuthorizationRequestClaims) decision {
			if r.ConnectOptions.Username == "backend" {
				return decision{errText: "backends are not for the callout"}
			}
			return appUser(r)
		})
		_, backend := calloutClient(t, url, nats.UserInfo("backend", calloutPass))
		return []string{backend, fmt.Sprintf("requests: %d", svc.seen())}
	})
}

// With allowed_accounts, configured users of other accounts skip the
// callout, as in the reference.
func TestAuthCalloutAllowedAccounts(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, false)
	w.allowed = []string{"OTHER"}
	p := startCalloutPair(t, w)
	calloutBothSides(t, p, func(t *testing.T, url string) []string {
		svc := p.w.serve(t, url, func(*jwt.AuthorizationRequestClaims) decision { return decision{account: "APP"} })
		_, backend := calloutClient(t, url, nats.UserInfo("backend", calloutPass))
		_, alice := calloutClient(t, url, nats.UserInfo("alice", "secret"))
		return []string{backend, alice, fmt.Sprintf("requests: %d", svc.seen())}
	})
}

// With no service subscribed, or one that never answers, the client is
// refused with the reference's error once the auth timeout passes (bus
// refuses at once when nobody subscribes).
func TestAuthCalloutServiceAbsent(t *testing.T) {
	t.Parallel()
	p := startCalloutPair(t, newCalloutWorld(t, false))
	calloutBothSides(t, p, func(t *testing.T, url string) []string {
		start := time.Now()
		_, outcome := calloutClient(t, url, nats.UserInfo("alice", "secret"))
		return []string{outcome, fmt.Sprint("within 3s: ", time.Since(start) < 3*time.Second)}
	})
}

// The refusal reaches the client as the reference sends it: one
// -ERR 'Authorization Violation' and the connection closes; the
// callout's error text goes to the server's log, not to the client
// (nats-server #6254, still so in 2.15.2).
func TestAuthCalloutRefusalOnTheWire(t *testing.T) {
	t.Parallel()
	p := startCalloutPair(t, newCalloutWorld(t, false))
	for _, side := range []struct{ name, url, addr string }{
		{"bus", busURL(p.bus), p.bus.Addr().String()},
		{"reference", p.ref.ClientURL(), p.ref.Addr().String()},
	} {
		t.Run(side.name, func(t *testing.T) {
			p.w.serve(t, side.url, func(*jwt.AuthorizationRequestClaims) decision {
				return decision{errText: "bad password for alice"}
			})
			nc, r, _ := readInfo(t, side.addr)
			if _, err := nc.Write([]byte(`CONNECT {"verbose":false,"user":"alice","pass":"x"}` + "\r\nPING\r\n")); err != nil {
				t.Fatal(err)
			}
			got := readUntilClosed(nc, r, 3*time.Second)
			if got != "-ERR 'Authorization Violation'\r\n<closed>" {
				t.Errorf("got %q", got)
			}
		})
	}
}

// A user JWT that expires while connected closes the connection with
// the reference's error.
func TestAuthCalloutUserExpires(t *testing.T) {
	t.Parallel()
	p := startCalloutPair(t, newCalloutWorld(t, false))
	calloutBothSides(t, p, func(t *testing.T, url string) []string {
		p.w.serve(t, url, func(*jwt.AuthorizationRequestClaims) decision {
			return decision{account: "APP", edit: func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(2 * time.Second).Unix() }}
		})
		closed := make(chan struct{})
		nc, outcome := calloutClient(t, url, nats.UserInfo("alice", "secret"), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		if nc == nil {
			return []string{outcome}
		}
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			return []string{outcome, "still open"}
		}
		last := nc.LastError()
		return []string{outcome, fmt.Sprint("closed: ", last, " expired=", errors.Is(last, nats.ErrAuthExpired) || strings.Contains(fmt.Sprint(last), "expired"))}
	})
}

// The same nats-server config file runs the callout on the bus binary
// (conf and cmd/bus's mapping) and on the reference.
func TestAuthCalloutFromConfigFile(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, true)
	text := strings.Replace(w.referenceConfig(), "# store: %q\n", "", 1)
	cp := startConfPair(t, text)
	bothSides(t, "nats://"+cp.busClient, "nats://"+cp.refClient, func(t *testing.T, url string) []string {
		w.serve(t, url, appUser)
		handler, errs := asyncErrors()
		nc, outcome := calloutClient(t, url, nats.UserInfo("alice", "secret"), handler)
		if nc == nil {
			return []string{outcome}
		}
		return append([]string{outcome}, pubSubOutcome(t, nc, errs)...)
	})
}
