package tests

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/bus-dev/bus/server"
)

// The auth callout scenario: the callout service logs in as "auth" in
// account AUTH; APP has a configured user "backend"; OTHER has none.
// Everyone else is decided by the service, written with nats.go and
// jwt/v2 as a real one is (github.com/synadia-io/callout.go is not
// served by the module proxy here).
const calloutPass = "pw"

// calloutWorld is the callout's keys: the account key that signs the
// service's answers and, with encryption, the service's curve key.
type calloutWorld struct {
	issuer    nkeys.KeyPair
	issuerPub string
	xkp       nkeys.KeyPair // nil: requests in the clear
	xkeyPub   string
	allowed   []string // allowed_accounts
	bypass    bool     // x_bus_bypass_authenticated (bus only)
}

func newCalloutWorld(t testing.TB, xkey bool) *calloutWorld {
	t.Helper()
	w := &calloutWorld{}
	var err error
	if w.issuer, err = nkeys.CreateAccount(); err != nil {
		t.Fatal(err)
	}
	w.issuerPub, _ = w.issuer.PublicKey()
	if xkey {
		if w.xkp, err = nkeys.CreateCurveKeys(); err != nil {
			t.Fatal(err)
		}
		w.xkeyPub, _ = w.xkp.PublicKey()
	}
	return w
}

// referenceConfig is the scenario in nats-server's syntax.
func (w *calloutWorld) referenceConfig() string {
	var extra []string
	if w.xkeyPub != "" {
		extra = append(extra, "xkey: "+w.xkeyPub)
	}
	if len(w.allowed) > 0 {
		extra = append(extra, "allowed_accounts: ["+strings.Join(w.allowed, ", ")+"]")
	}
	return `
listen: 127.0.0.1:-1
accounts {
  AUTH { users: [ {user: auth, password: pw} ] }
  APP { users: [ {user: backend, password: pw} ] }
  OTHER {}
}
authorization {
  timeout: 1
  auth_callout {
    issuer: ` + w.issuerPub + `
    account: AUTH
    auth_users: [ auth ]
    ` + strings.Join(extra, "\n    ") + `
  }
}
# store: %q
`
}

// busOptions is the scenario for bus.
func (w *calloutWorld) busOptions() server.Options {
	user := func(name string) []server.User { return []server.User{{Name: name, Password: calloutPass}} }
	return server.Options{
		Accounts: []server.Account{
			{Name: "AUTH", Users: user("auth")},
			{Name: "APP", Users: user("backend")},
			{Name: "OTHER"},
		},
		Authorization: server.Authorization{
			Timeout: time.Second,
			Callout: &server.AuthCallout{
				Issuer: w.issuerPub, Account: "AUTH", AuthUsers: []string{"auth"}, XKey: w.xkeyPub,
				AllowedAccounts: w.allowed, BypassAuthenticated: w.bypass,
			},
		},
	}
}

// calloutPair is bus and the reference with one calloutWorld.
type calloutPair struct {
	w   *calloutWorld
	bus *server.Server
	ref *natsserver.Server
}

func startCalloutPair(t *testing.T, w *calloutWorld) calloutPair {
	t.Helper()
	return calloutPair{w: w, bus: startBus(t, w.busOptions()), ref: startReferenceConfig(t, w.referenceConfig())}
}

// decision is what the service answers one request.
type decision struct {
	account string                  // the user JWT's audience: the account it joins
	edit    func(*jwt.UserClaims)   // changes the user JWT before it is signed
	errText string                  // answer with this error instead
	silent  bool                    // never answer
	signer  nkeys.KeyPair           // signs the user JWT instead of the issuer
	respond func(req []byte) []byte // answers these bytes, as they are
}

// calloutService is a running callout service; requests hears every
// request it decoded.
type calloutService struct {
	mu       sync.Mutex // guards requests
	requests []*jwt.AuthorizationRequestClaims
	problems chan string
}

// serve connects the service to url, as "auth" unless opts say how, and
// answers each request with decide's decision.
func (w *calloutWorld) serve(t testing.TB, url string, decide func(*jwt.AuthorizationRequestClaims) decision, opts ...nats.Option) *calloutService {
	t.Helper()
	svc := &calloutService{problems: make(chan string, 16)}
	problem := func(format string, args ...any) {
		select {
		case svc.problems <- fmt.Sprintf(format, args...):
		default:
		}
	}
	if len(opts) == 0 {
		opts = []nats.Option{nats.UserInfo("auth", calloutPass)}
	}
	nc := connect(t, url, append(opts, nats.Name("callout"))...)
	_, err := nc.Subscribe("$SYS.REQ.USER.AUTH", func(m *nats.Msg) {
		data := m.Data
		serverXKey := m.Header.Get("Nats-Server-Xkey")
		if w.xkp != nil {
			if serverXKey == "" {
				problem("encrypted callout: request without the Nats-Server-Xkey header")
				return
			}
			opened, err := w.xkp.Open(data, serverXKey)
			if err != nil {
				problem("open request: %v", err)
				return
			}
			data = opened
		} else if serverXKey != "" {
			problem("unencrypted callout: request with an xkey header")
		}
		req, err := jwt.DecodeAuthorizationRequestClaims(string(data))
		if err != nil {
			problem("decode request: %v", err)
			return
		}
		svc.mu.Lock()
		svc.requests = append(svc.requests, req)
		svc.mu.Unlock()
		d := decide(req)
		if d.silent {
			return
		}
		if d.respond != nil {
			_ = m.Respond(d.respond(data))
			return
		}
		rc := jwt.NewAuthorizationResponseClaims(req.UserNkey)
		rc.Audience = req.Server.ID
		if d.errText != "" {
			rc.Error = d.errText
		} else {
			uc := jwt.NewUserClaims(req.UserNkey)
			uc.Audience = d.account
			if d.edit != nil {
				d.edit(uc)
			}
			signer := w.issuer
			if d.signer != nil {
				signer = d.signer
			}
			if rc.Jwt, err = uc.Encode(signer); err != nil {
				problem("encode user: %v", err)
				return
			}
		}
		token, err := rc.Encode(w.issuer)
		if err != nil {
			problem("encode response: %v", err)
			return
		}
		out := []byte(token)
		if w.xkp != nil {
			if out, err = w.xkp.Seal(out, serverXKey); err != nil {
				problem("seal response: %v", err)
				return
			}
		}
		_ = m.Respond(out)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case p := <-svc.problems:
			t.Errorf("callout service: %s", p)
		default:
		}
	})
	return svc
}

// seen is how many requests the service decoded.
func (s *calloutService) seen() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// last is the last request the service decoded.
func (s *calloutService) last(t *testing.T) *jwt.AuthorizationRequestClaims {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		t.Fatal("the callout service got no request")
	}
	return s.requests[len(s.requests)-1]
}

// calloutClient connects as a client the callout decides about and
// reports how the connection went: "connected", or nats.go's error.
// The connection (if any) is closed when the test ends.
func calloutClient(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, string) {
	t.Helper()
	nc, err := nats.Connect(url, append([]nats.Option{nats.NoReconnect()}, opts...)...)
	if err != nil {
		return nil, "connect: " + err.Error()
	}
	t.Cleanup(nc.Close)
	return nc, "connected"
}

// calloutBothSides is bothSides, logging each side's outcomes (seen
// with -v), so a reader sees what the reference does, not only that bus
// does the same.
func calloutBothSides(t *testing.T, p calloutPair, scenario func(t *testing.T, url string) []string) {
	t.Helper()
	bothSides(t, busURL(p.bus), p.ref.ClientURL(), func(t *testing.T, url string) []string {
		out := scenario(t, url)
		t.Logf("outcomes: %q", out)
		return out
	})
}
