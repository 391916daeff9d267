package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// operatorCallout is operator mode with a callout: account AUTH's JWT
// names its service user in auth_users and lets the callout place
// users in APP; OTHER is not allowed. Clients log in as AUTH's sentinel,
// a bearer user that may do nothing itself.
type operatorCallout struct {
	jw          *jwtWorld
	cw          *calloutWorld
	serviceCred string
	sentinel    string
	app, other  *jwtAccount
}

func newOperatorCallout(t *testing.T, xkey bool) *operatorCallout {
	t.Helper()
	jw := newJWTWorld(t)
	auth := jw.addAccount("AUTH", nil)
	oc := &operatorCallout{jw: jw, app: jw.addAccount("APP", nil), other: jw.addAccount("OTHER", nil)}
	oc.cw = &calloutWorld{issuer: auth.kp, issuerPub: auth.pub}
	if xkey {
		var err error
		if oc.cw.xkp, err = nkeys.CreateCurveKeys(); err != nil {
			t.Fatal(err)
		}
		oc.cw.xkeyPub, _ = oc.cw.xkp.PublicKey()
	}
	var servicePub string
	oc.serviceCred, servicePub = jw.user("AUTH", nil, nil)
	oc.sentinel, _ = jw.user("AUTH", nil, func(uc *jwt.UserClaims) {
		uc.BearerToken = true
		uc.Pub.Deny.Add(">")
		uc.Sub.Deny.Add(">")
	})
	jw.addAccount("AUTH", func(ac *jwt.AccountClaims) {
		ac.Authorization.AuthUsers.Add(servicePub)
		ac.Authorization.AllowedAccounts.Add(oc.app.pub)
		ac.Authorization.XKey = oc.cw.xkeyPub
	})
	return oc
}

// TestAuthCalloutOperatorModeMatchesReference runs the callout of an
// account JWT against bus and the reference with the same operator.
func TestAuthCalloutOperatorModeMatchesReference(t *testing.T) {
	t.Parallel()
	for _, xkey := range []bool{false, true} {
		t.Run(fmt.Sprintf("xkey=%v", xkey), func(t *testing.T) {
			t.Parallel()
			oc := newOperatorCallout(t, xkey)
			p := startJWTPair(t, oc.jw)
			inApp := func(*jwt.AuthorizationRequestClaims) decision {
				return decision{signer: oc.app.kp, edit: func(uc *jwt.UserClaims) {
					uc.Pub.Allow.Add("app.>")
					uc.Sub.Allow.Add("app.>", "_INBOX.>")
				}}
			}
			for _, sc := range []struct {
				name   string
				decide func(*jwt.AuthorizationRequestClaims) decision
				after  func(t *testing.T, nc *nats.Conn, errs <-chan error) []string
			}{
				{"into an allowed account", inApp, pubSubOutcome},
				{"into the callout account", func(*jwt.AuthorizationRequestClaims) decision { return decision{} },
					func(t *testing.T, nc *nats.Conn, errs <-chan error) []string {
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
				{"into an account not allowed", func(*jwt.AuthorizationRequestClaims) decision {
					return decision{signer: oc.other.kp}
				}, nil},
				{"deny with error text", func(*jwt.AuthorizationRequestClaims) decision {
					return decision{errText: "who are you"}
				}, nil},
				{"expired user", func(*jwt.AuthorizationRequestClaims) decision {
					return decision{signer: oc.app.kp, edit: func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(-time.Minute).Unix() }}
				}, nil},
			} {
				t.Run(sc.name, func(t *testing.T) {
					bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
						oc.cw.serve(t, url, sc.decide, nats.UserCredentials(oc.serviceCred))
						handler, errs := asyncErrors()
						nc, outcome := calloutClient(t, url, nats.UserCredentials(oc.sentinel), handler)
						out := []string{outcome}
						if nc != nil && sc.after != nil {
							out = append(out, sc.after(t, nc, errs)...)
						}
						t.Logf("outcomes: %q", out)
						return out
					})
				})
			}
		})
	}
}

// The request of operator mode names the account, not an issuer of
// the config; the service user itself skips the callout.
func TestAuthCalloutOperatorModeRequest(t *testing.T) {
	t.Parallel()
	oc := newOperatorCallout(t, false)
	p := startJWTPair(t, oc.jw)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		svc := oc.cw.serve(t, url, func(*jwt.AuthorizationRequestClaims) decision { return decision{} }, nats.UserCredentials(oc.serviceCred))
		before := svc.seen()
		if _, outcome := calloutClient(t, url, nats.UserCredentials(oc.sentinel)); outcome != "connected" {
			t.Fatal(outcome)
		}
		r := svc.last(t)
		out := []string{
			fmt.Sprint("requests: ", svc.seen()-before),
			fmt.Sprint("subject is the account: ", r.Subject == oc.cw.issuerPub),
			fmt.Sprint("connect jwt is the sentinel's: ", r.ConnectOptions.JWT == jwtOf(t, oc.sentinel)),
			fmt.Sprint("client nonce: ", r.ClientInformation.Nonce != ""),
		}
		t.Logf("outcomes: %q", out)
		return out
	})
}
