package tests

import (
	"fmt"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The composition scenario of nats-server #8044: backends authenticate
// by client certificate (tls verify_and_map), everyone else through the
// callout. The callout service is mapped by its certificate too.
const (
	composeAuthUser    = "CN=auth,O=bus tests"
	composeBackendUser = "CN=backend,O=bus tests"
)

// composeWorld is the certificates of the scenario.
type composeWorld struct {
	*calloutWorld
	ca                     *testCA
	serverCert, serverKey  string
	authCert, authKey      string
	backendCert, backendKe string
	guestCert, guestKey    string
}

func newComposeWorld(t *testing.T) *composeWorld {
	t.Helper()
	w := &composeWorld{calloutWorld: newCalloutWorld(t, false), ca: newTestCA(t, "compose")}
	w.serverCert, w.serverKey = w.ca.serverCert(t)
	w.authCert, w.authKey = w.ca.issue(t, "auth", certSpec{cn: "auth", client: true})
	w.backendCert, w.backendKe = w.ca.issue(t, "backend", certSpec{cn: "backend", client: true})
	w.guestCert, w.guestKey = w.ca.issue(t, "guest", certSpec{cn: "guest", client: true})
	return w
}

func (w *composeWorld) referenceConfig() string {
	return fmt.Sprintf(`
listen: 127.0.0.1:-1
tls { cert_file: %q, key_file: %q, ca_file: %q, verify_and_map: true }
accounts {
  AUTH { users: [ {user: %q} ] }
  APP { users: [ {user: %q} ] }
}
authorization {
  timeout: 1
  auth_callout { issuer: %s, account: AUTH, auth_users: [ %q ] }
}
`, w.serverCert, w.serverKey, w.ca.file, composeAuthUser, composeBackendUser, w.issuerPub, composeAuthUser) + "# store: %q\n"
}

func (w *composeWorld) busOptions(bypass bool) server.Options {
	return server.Options{
		TLS: server.TLSOptions{CertFile: w.serverCert, KeyFile: w.serverKey, CAFile: w.ca.file, VerifyAndMap: true},
		Accounts: []server.Account{
			{Name: "AUTH", Users: []server.User{{Name: composeAuthUser}}},
			{Name: "APP", Users: []server.User{{Name: composeBackendUser}}},
		},
		Authorization: server.Authorization{
			// Not nil: bus maps certificates to the accounts' users only
			// beside a users list, however empty.
			Users:   []server.User{},
			Callout: &server.AuthCallout{Issuer: w.issuerPub, Account: "AUTH", AuthUsers: []string{composeAuthUser}, BypassAuthenticated: bypass},
		},
	}
}

// serveCompose runs the callout service, which lets guests into APP and
// refuses everyone else (a backend it is asked about among them).
func (w *composeWorld) serveCompose(t *testing.T, url string) *calloutService {
	t.Helper()
	return w.serve(t, url, func(r *jwt.AuthorizationRequestClaims) decision {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			return decision{errText: "no verified certificate"}
		}
		if r.ConnectOptions.Username == "guest" {
			return decision{account: "APP"}
		}
		return decision{errText: "only guests here"}
	}, nats.RootCAs(w.ca.file), nats.ClientCert(w.authCert, w.authKey))
}

// By default a backend mapped by its certificate goes through the
// callout as in the reference, so the service refusing it keeps it out;
// guests get in through the callout, which sees their verified chain.
func TestAuthCalloutComposesLikeTheReferenceByDefault(t *testing.T) {
	t.Parallel()
	w := newComposeWorld(t)
	p := calloutPair{w: w.calloutWorld, bus: startBus(t, w.busOptions(false)), ref: startReferenceConfig(t, w.referenceConfig())}
	busTLS := "tls://" + p.bus.Addr().String()
	refTLS := "tls://" + p.ref.Addr().String()
	bothSides(t, busTLS, refTLS, func(t *testing.T, url string) []string {
		svc := w.serveCompose(t, url)
		_, backend := calloutClient(t, url, nats.RootCAs(w.ca.file), nats.ClientCert(w.backendCert, w.backendKe))
		_, guest := calloutClient(t, url, nats.RootCAs(w.ca.file), nats.ClientCert(w.guestCert, w.guestKey), nats.UserInfo("guest", "x"))
		chains := len(svc.last(t).TLS.VerifiedChains)
		out := []string{"backend: " + backend, "guest: " + guest, fmt.Sprintf("requests: %d, chains: %d", svc.seen(), chains)}
		t.Logf("outcomes: %q", out)
		return out
	})
}

// With x_bus_bypass_authenticated a backend mapped by its certificate
// is in without the callout, which decides only about the clients no
// configured user matches (nats-server #8044).
func TestAuthCalloutBypassForAuthenticatedClients(t *testing.T) {
	t.Parallel()
	w := newComposeWorld(t)
	s := startBus(t, w.busOptions(true))
	url := "tls://" + s.Addr().String()
	svc := w.serveCompose(t, url)
	if _, got := calloutClient(t, url, nats.RootCAs(w.ca.file), nats.ClientCert(w.backendCert, w.backendKe)); got != "connected" {
		t.Errorf("backend: %s", got)
	}
	if n := svc.seen(); n != 0 {
		t.Errorf("the callout was asked %d times about the backend", n)
	}
	if _, got := calloutClient(t, url, nats.RootCAs(w.ca.file), nats.ClientCert(w.guestCert, w.guestKey), nats.UserInfo("guest", "x")); got != "connected" {
		t.Errorf("guest: %s", got)
	}
	if _, got := calloutClient(t, url, nats.RootCAs(w.ca.file), nats.ClientCert(w.guestCert, w.guestKey), nats.UserInfo("mallory", "x")); got == "connected" {
		t.Errorf("mallory: %s", got)
	}
	if n := svc.seen(); n != 2 {
		t.Errorf("the callout was asked %d times, want 2 (guest, mallory)", n)
	}
}

// The switch with passwords: a configured user with the right password
// skips the callout, a wrong password goes to it.
func TestAuthCalloutBypassWithPasswords(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, false)
	w.bypass = true
	s := startBus(t, w.busOptions())
	url := busURL(s)
	svc := w.serve(t, url, func(r *jwt.AuthorizationRequestClaims) decision {
		return decision{errText: "no"}
	})
	if _, got := calloutClient(t, url, nats.UserInfo("backend", calloutPass)); got != "connected" {
		t.Errorf("backend: %s", got)
	}
	if _, got := calloutClient(t, url, nats.UserInfo("backend", "wrong")); got == "connected" {
		t.Errorf("backend with a wrong password: %s", got)
	}
	if n := svc.seen(); n != 1 {
		t.Errorf("the callout was asked %d times, want 1 (the wrong password)", n)
	}
}

// Sending no credentials is not another way of authenticating: with the
// switch on, a client that would be the no_auth_user still goes through
// the callout.
func TestAuthCalloutBypassIsNotForNoAuthUser(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, false)
	w.bypass = true
	opts := w.busOptions()
	opts.Authorization.Users = []server.User{}
	opts.Authorization.NoAuthUser = "backend"
	s := startBus(t, opts)
	svc := w.serve(t, busURL(s), func(*jwt.AuthorizationRequestClaims) decision {
		return decision{errText: "say who you are"}
	})
	if _, got := calloutClient(t, busURL(s)); got == "connected" {
		t.Error("a client without credentials got in as the no_auth_user, past the callout")
	}
	if n := svc.seen(); n != 1 {
		t.Errorf("the callout was asked %d times, want 1", n)
	}
}
