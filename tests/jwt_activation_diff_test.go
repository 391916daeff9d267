package tests

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// activation is an activation token for account importer to import
// subject of kind from the account that signer signs for (issuerAccount
// set when signer is one of its signing keys), with edit applied.
func activation(t *testing.T, signer nkeys.KeyPair, issuerAccount, importer, subject string, kind jwt.ExportType, edit func(*jwt.ActivationClaims)) string {
	t.Helper()
	act := jwt.NewActivationClaims(importer)
	act.ImportSubject = jwt.Subject(subject)
	act.ImportType = kind
	act.IssuerAccount = issuerAccount
	if edit != nil {
		edit(act)
	}
	token, err := act.Encode(signer)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// activationWorld is an exporter A with a token-required stream
// (private.>) and service (psvc) export, and importers that hold each
// kind of activation token: good, signed by A's signing key, none,
// expired, revoked by the export. (A token issued to another account or
// for another subject makes the importer's whole account JWT invalid, on
// both servers: TestJWTResolverRefusesInvalidUpdate.)
func activationWorld(t *testing.T) (*jwtWorld, []string) {
	t.Helper()
	w := newJWTWorld(t)
	signingKP, _ := nkeys.CreateAccount()
	signingPub, _ := signingKP.PublicKey()
	names := []string{"GOOD", "SIGNINGKEY", "NOTOKEN", "EXPIRED", "REVOKED"}
	for _, n := range names {
		w.addAccount(n, nil)
	}
	a := w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.SigningKeys.Add(signingPub)
		stream := &jwt.Export{Subject: "private.>", Type: jwt.Stream, TokenReq: true}
		stream.Revocations = jwt.RevocationList{}
		// Revoked from a time after the token's issue (the issue time
		// has a resolution of a second).
		stream.Revocations[w.accounts["REVOKED"].pub] = time.Now().Add(time.Hour).Unix()
		ac.Exports.Add(stream, &jwt.Export{Subject: "psvc", Type: jwt.Service, TokenReq: true})
	})
	tokens := map[string]func(kind jwt.ExportType, subject string) string{
		"GOOD": func(k jwt.ExportType, s string) string {
			return activation(t, a.kp, "", w.accounts["GOOD"].pub, s, k, nil)
		},
		"SIGNINGKEY": func(k jwt.ExportType, s string) string {
			return activation(t, signingKP, a.pub, w.accounts["SIGNINGKEY"].pub, s, k, nil)
		},
		"NOTOKEN": func(jwt.ExportType, string) string { return "" },
		"EXPIRED": func(k jwt.ExportType, s string) string {
			return activation(t, a.kp, "", w.accounts["EXPIRED"].pub, s, k, func(ac *jwt.ActivationClaims) {
				ac.Expires = time.Now().Add(-time.Minute).Unix()
			})
		},
		"REVOKED": func(k jwt.ExportType, s string) string {
			return activation(t, a.kp, "", w.accounts["REVOKED"].pub, s, k, nil)
		},
	}
	for _, n := range names {
		w.addAccount(n, func(ac *jwt.AccountClaims) {
			ac.Imports.Add(
				&jwt.Import{Subject: "private.>", Account: a.pub, Type: jwt.Stream, Token: tokens[n](jwt.Stream, "private.>")},
				&jwt.Import{Subject: "psvc", Account: a.pub, Type: jwt.Service, Token: tokens[n](jwt.Service, "psvc")})
		})
	}
	return w, names
}

// TestJWTActivationTokens checks token-required exports with each kind
// of activation token against the reference: the valid ones (signed by
// the exporting account or its signing key) import the stream and the
// service, and the others (none, expired, revoked) import nothing while
// the rest still works.
func TestJWTActivationTokens(t *testing.T) {
	t.Parallel()
	w, names := activationWorld(t)
	creds := map[string]string{}
	for _, n := range append([]string{"A"}, names...) {
		creds[n], _ = w.user(n, nil, nil)
	}
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		na := connect(t, url, nats.UserCredentials(creds["A"]))
		na.Subscribe("psvc", func(m *nats.Msg) { m.Respond([]byte("served")) })
		na.Flush()
		subs := map[string]*nats.Subscription{}
		conns := map[string]*nats.Conn{}
		for _, n := range names {
			conns[n] = connect(t, url, nats.UserCredentials(creds[n]))
			subs[n], _ = conns[n].SubscribeSync("private.>")
			conns[n].Flush()
		}
		// The good importer's stream import is in place once it gets a
		// message; the others' would be by then.
		eventually(t, 5*time.Second, func() bool {
			na.Publish("private.warmup", nil)
			_, err := subs["GOOD"].NextMsg(50 * time.Millisecond)
			return err == nil
		})
		received(t, subs["GOOD"], 100*time.Millisecond)
		na.Publish("private.x", []byte("p"))
		na.Flush()
		var steps []string
		for _, n := range names {
			got := received(t, subs[n], 200*time.Millisecond)
			var kept []string
			for _, m := range got {
				if !strings.HasPrefix(m, "private.warmup") {
					kept = append(kept, m)
				}
			}
			resp, err := conns[n].Request("psvc", nil, 500*time.Millisecond)
			service := strings.ToLower(fmt.Sprint(err))
			if err == nil {
				service = string(resp.Data)
			}
			steps = append(steps, fmt.Sprintf("%s: stream %q, service %s", n, kept, service))
		}
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}

// TestJWTActivationSkipLogged checks that bus names each import it skips
// and why in its log.
func TestJWTActivationSkipLogged(t *testing.T) {
	t.Parallel()
	w, _ := activationWorld(t)
	var mu sync.Mutex
	var logs bytes.Buffer
	opts := w.busOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))
	startBus(t, opts)
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	for _, want := range []string{
		`account=` + w.accounts["NOTOKEN"].pub + ` import=private.> type=stream`,
		"the export requires one and the import has none",
		"activation token: expired",
		"revoked by the export",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "account="+w.accounts["GOOD"].pub+" ") {
		t.Errorf("the good import was skipped:\n%s", text)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestJWTActivationExpiresWhileRunning checks that an import whose
// activation token expires stops delivering then, on both servers.
func TestJWTActivationExpiresWhileRunning(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	a := w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Exports.Add(&jwt.Export{Subject: "private.>", Type: jwt.Stream, TokenReq: true})
	})
	b := w.addAccount("B", nil)
	token := activation(t, a.kp, "", b.pub, "private.>", jwt.Stream, func(ac *jwt.ActivationClaims) {
		ac.Expires = time.Now().Add(3 * time.Second).Unix()
	})
	w.addAccount("B", func(ac *jwt.AccountClaims) {
		ac.Imports.Add(&jwt.Import{Subject: "private.>", Account: a.pub, Type: jwt.Stream, Token: token})
	})
	credsA, _ := w.user("A", nil, nil)
	credsB, _ := w.user("B", nil, nil)
	p := startJWTPair(t, w)
	// Both sides at once: the token expires for both at the same time.
	out := map[string][]string{}
	var mu sync.Mutex
	t.Run("sides", func(t *testing.T) {
		for side, url := range map[string]string{"bus": busURL(p.bus), "reference": p.refURL} {
			t.Run(side, func(t *testing.T) {
				t.Parallel()
				steps := activationExpiry(t, url, credsA, credsB)
				mu.Lock()
				out[side] = steps
				mu.Unlock()
			})
		}
	})
	sameOutcomes(t, out["reference"], out["bus"])
}

// activationExpiry is TestJWTActivationExpiresWhileRunning's scenario on
// one server.
func activationExpiry(t *testing.T, url, credsA, credsB string) []string {
	na := connect(t, url, nats.UserCredentials(credsA))
	nb := connect(t, url, nats.UserCredentials(credsB))
	sub, _ := nb.SubscribeSync("private.>")
	nb.Flush()
	deliver := func() bool {
		na.Publish("private.x", nil)
		_, err := sub.NextMsg(100 * time.Millisecond)
		return err == nil
	}
	before := waitFor(2*time.Second, deliver)
	// Expired once nothing arrives for a while.
	stopped := waitFor(10*time.Second, func() bool {
		for range 5 {
			if deliver() {
				return false
			}
		}
		return true
	})
	return []string{fmt.Sprintf("delivered before: %v", before), fmt.Sprintf("stopped after expiry: %v", stopped)}
}

// TestJWTAccountTokenPosition checks an export per account: an account
// imports it only for subjects naming the account at the export's
// account_token_position, on both servers.
func TestJWTAccountTokenPosition(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	b := w.addAccount("B", nil)
	w.addAccount("C", nil)
	a := w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Exports.Add(&jwt.Export{Subject: "per.*.>", Type: jwt.Stream, AccountTokenPosition: 2})
	})
	for _, n := range []string{"B", "C"} {
		w.addAccount(n, func(ac *jwt.AccountClaims) {
			ac.Imports.Add(&jwt.Import{Subject: jwt.Subject("per." + b.pub + ".>"), Account: a.pub, Type: jwt.Stream})
		})
	}
	creds := map[string]string{}
	for _, n := range []string{"A", "B", "C"} {
		creds[n], _ = w.user(n, nil, nil)
	}
	p := startJWTPair(t, w)
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		na := connect(t, url, nats.UserCredentials(creds["A"]))
		subs := map[string]*nats.Subscription{}
		for _, n := range []string{"B", "C"} {
			nc := connect(t, url, nats.UserCredentials(creds[n]))
			subs[n], _ = nc.SubscribeSync("per.>")
			nc.Flush()
		}
		eventually(t, 5*time.Second, func() bool {
			na.Publish("per."+b.pub+".warmup", nil)
			_, err := subs["B"].NextMsg(50 * time.Millisecond)
			return err == nil
		})
		received(t, subs["B"], 100*time.Millisecond)
		na.Publish("per."+b.pub+".x", []byte("p"))
		na.Flush()
		var steps []string
		for _, n := range []string{"B", "C"} {
			var kept int
			for _, m := range received(t, subs[n], 200*time.Millisecond) {
				if !strings.Contains(m, "warmup") {
					kept++
				}
			}
			steps = append(steps, fmt.Sprintf("%s: %d", n, kept))
		}
		t.Log(steps)
		return steps
	})
}
