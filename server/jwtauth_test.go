package server

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Fixed keys, so that the fuzz corpus keeps its meaning.
const (
	jwtTestOperatorSeed = "SOAHKH2A4Q7SHOU5AI7FO56AIARSQM5O3YJ2K24CDN7DZZEELGPANPJQ5Y"
	jwtTestAccountSeed  = "SAAKISQW3DALQ4NLMAFDPYLATLKIC32FOCM7QLSYG4DUMY3YSFOMV4GNYY"
	jwtTestUserSeed     = "SUAPHQY2QTY4AJDU2FJRSR4SLSKGHN63T4DQP23XHBPWXB5R7RDXSMENKA"
)

// jwtFixture is an operator, one account and one user of it.
type jwtFixture struct {
	op, acc, user          nkeys.KeyPair
	opPub, accPub, userPub string
	opJWT                  string
	ac                     *jwt.AccountClaims
}

func newJWTFixture(t testing.TB) *jwtFixture {
	t.Helper()
	f := &jwtFixture{}
	var err error
	for _, k := range []struct {
		seed string
		kp   *nkeys.KeyPair
		pub  *string
	}{{jwtTestOperatorSeed, &f.op, &f.opPub}, {jwtTestAccountSeed, &f.acc, &f.accPub}, {jwtTestUserSeed, &f.user, &f.userPub}} {
		if *k.kp, err = nkeys.FromSeed([]byte(k.seed)); err != nil {
			t.Fatal(err)
		}
		*k.pub, _ = (*k.kp).PublicKey()
	}
	if f.opJWT, err = jwt.NewOperatorClaims(f.opPub).Encode(f.op); err != nil {
		t.Fatal(err)
	}
	f.ac = jwt.NewAccountClaims(f.accPub)
	return f
}

// auth compiles the fixture's operator mode as a server would.
func (f *jwtFixture) auth(t testing.TB) *jwtAuth {
	t.Helper()
	accJWT, err := f.ac.Encode(f.op)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := compileOperator(&Operator{JWTs: []string{f.opJWT}, Accounts: map[string]string{f.accPub: accJWT}})
	if err != nil {
		t.Fatal(err)
	}
	acc := newAccount(f.accPub, nil, AccountLimits{})
	return newJWTAuth(tr, accountSet{f.accPub: acc}, nil, time.Now)
}

// userJWT is a user JWT for the fixture's user, edited, signed by signer.
func (f *jwtFixture) userJWT(t testing.TB, signer nkeys.KeyPair, edit func(*jwt.UserClaims)) string {
	t.Helper()
	uc := jwt.NewUserClaims(f.userPub)
	if edit != nil {
		edit(uc)
	}
	s, err := uc.Encode(signer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *jwtFixture) sign(nonce string) string {
	sig, _ := f.user.Sign([]byte(nonce))
	return base64.RawURLEncoding.EncodeToString(sig)
}

func TestJWTAuthVerification(t *testing.T) {
	t.Parallel()
	f := newJWTFixture(t)
	signingKey, _ := nkeys.CreateAccount()
	signingPub, _ := signingKey.PublicKey()
	f.ac.SigningKeys.Add(signingPub)
	stranger, _ := nkeys.CreateAccount()
	j := f.auth(t)
	const nonce = "bm9uY2U"
	for _, c := range []struct {
		name, jwt, sig, reason string
	}{
		{"account signs", f.userJWT(t, f.acc, nil), f.sign(nonce), ""},
		{"signing key with issuer_account", f.userJWT(t, signingKey, func(uc *jwt.UserClaims) { uc.IssuerAccount = f.accPub }), f.sign(nonce), ""},
		{"bearer needs no signature", f.userJWT(t, f.acc, func(uc *jwt.UserClaims) { uc.BearerToken = true }), "", ""},
		{"no JWT", "", "", "no user JWT"},
		{"garbage", "eyJ.x.y", "", "user JWT not valid"},
		{"signature missing", f.userJWT(t, f.acc, nil), "", "signature missing"},
		{"signature of another nonce", f.userJWT(t, f.acc, nil), f.sign("other"), "signature not verified"},
		{"signing key without issuer_account", f.userJWT(t, signingKey, nil), f.sign(nonce), "not found"},
		{"unknown account", f.userJWT(t, stranger, nil), f.sign(nonce), "not found"},
		{"issuer_account names a key that did not sign", f.userJWT(t, stranger, func(uc *jwt.UserClaims) { uc.IssuerAccount = f.accPub }), f.sign(nonce), "neither account"},
		{"expired", f.userJWT(t, f.acc, func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(-time.Second).Unix() }), f.sign(nonce), "expired"},
		{"not yet valid", f.userJWT(t, f.acc, func(uc *jwt.UserClaims) { uc.NotBefore = time.Now().Add(time.Hour).Unix() }), f.sign(nonce), "not yet valid"},
		{"data limit not enforced", f.userJWT(t, f.acc, func(uc *jwt.UserClaims) { uc.Data = 10 }), f.sign(nonce), "data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, fail := j.authenticate(credentials{JWT: c.jwt, Sig: c.sig}, nonce, true)
			switch {
			case c.reason == "" && fail != nil:
				t.Fatalf("refused: %s", fail.reason)
			case c.reason == "" && (id.acc == nil || id.acc.name != f.accPub || id.name != f.userPub):
				t.Fatalf("identity %+v", id)
			case c.reason != "" && fail == nil:
				t.Fatalf("accepted, want refusal with %q", c.reason)
			case c.reason != "" && !strings.Contains(fail.reason, c.reason):
				t.Fatalf("reason %q, want %q", fail.reason, c.reason)
			}
		})
	}
	t.Run("revoked", func(t *testing.T) {
		r := newJWTFixture(t)
		token := r.userJWT(t, r.acc, nil)
		// Revoked are the user's JWTs issued before the revocation's time.
		r.ac.RevokeAt(r.userPub, time.Now().Add(time.Minute))
		if _, fail := r.auth(t).authenticate(credentials{JWT: token, Sig: r.sign(nonce)}, nonce, true); fail == nil || !strings.Contains(fail.reason, "revoked") {
			t.Fatalf("got %+v, want revoked", fail)
		}
	})
}

func TestCompileOperatorRefusals(t *testing.T) {
	t.Parallel()
	f := newJWTFixture(t)
	other, _ := nkeys.CreateOperator()
	otherPub, _ := other.PublicKey()
	good, _ := f.ac.Encode(f.op)
	bySelf, _ := jwt.NewAccountClaims(f.accPub).Encode(other)
	leaf := jwt.NewAccountClaims(f.accPub)
	leaf.Limits.LeafNodeConn = 1
	leafJWT, _ := leaf.Encode(f.op)
	foreignOp := jwt.NewOperatorClaims(f.opPub)
	foreignOpJWT, _ := foreignOp.Encode(other) // the operator's claims signed by another key
	for _, c := range []struct {
		name string
		o    Operator
		want string
	}{
		{"no operator", Operator{}, "operator: no operator JWT"},
		{"not a JWT", Operator{JWTs: []string{"hello"}}, "operator[0]: not an operator JWT"},
		{"operator signed by another", Operator{JWTs: []string{foreignOpJWT}}, "neither the operator nor one of its signing keys"},
		{"account JWT as operator", Operator{JWTs: []string{good}}, "not an operator JWT"},
		// The system account's JWT must be trusted: the reference does
		// not start without it either (others are skipped: below).
		{"system account signed by a stranger", Operator{JWTs: []string{f.opJWT}, SystemAccount: f.accPub, Accounts: map[string]string{f.accPub: bySelf}}, "resolver_preload " + f.accPub + ": signed by " + otherPub},
		{"system account leaf limit", Operator{JWTs: []string{f.opJWT}, SystemAccount: f.accPub, Accounts: map[string]string{f.accPub: leafJWT}}, "limits.leaf"},
		{"system account without JWT", Operator{JWTs: []string{f.opJWT}, SystemAccount: f.accPub}, "system_account: " + f.accPub + " has no account JWT"},
		{"system account not an account key", Operator{JWTs: []string{f.opJWT}, SystemAccount: "x"}, "system_account"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compileOperator(&c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestCompileOperatorSkipsUntrustedAccounts checks that an account JWT
// bus cannot take (not the system account's) is skipped with its reason,
// as the reference starts without it, and that an operator's
// strict_signing_key_usage distrusts accounts its identity key signed.
func TestCompileOperatorSkipsUntrustedAccounts(t *testing.T) {
	t.Parallel()
	f := newJWTFixture(t)
	other, _ := nkeys.CreateOperator()
	good, _ := f.ac.Encode(f.op)
	bySelf, _ := jwt.NewAccountClaims(f.accPub).Encode(other)
	r3 := jwt.NewAccountClaims(f.accPub)
	r3.Limits.JetStreamTieredLimits = jwt.JetStreamTieredLimits{"R3": {MemoryStorage: -1, DiskStorage: -1}}
	r3Only, _ := r3.Encode(f.op)
	for _, c := range []struct {
		name, key, token, want string
	}{
		{"signed by a stranger", f.accPub, bySelf, "neither a trusted operator"},
		{"an R3 tier only", f.accPub, r3Only, "R1 tier only"},
		{"under another key", "AB", good, "is account " + f.accPub + "'s"},
	} {
		tr, err := compileOperator(&Operator{JWTs: []string{f.opJWT}, Accounts: map[string]string{c.key: c.token}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if tr.accounts[c.key] != nil || tr.skipped[c.key] == nil || !strings.Contains(tr.skipped[c.key].Error(), c.want) {
			t.Errorf("%s: account taken %v, skipped for %v", c.name, tr.accounts[c.key] != nil, tr.skipped[c.key])
		}
	}
	signing, _ := nkeys.CreateOperator()
	signingPub, _ := signing.PublicKey()
	strict := jwt.NewOperatorClaims(f.opPub)
	strict.StrictSigningKeyUsage = true
	strict.SigningKeys.Add(signingPub)
	strictJWT, _ := strict.Encode(f.op)
	bySigningKey, _ := f.ac.Encode(signing)
	tr, err := compileOperator(&Operator{JWTs: []string{strictJWT}, Accounts: map[string]string{f.accPub: good}})
	if err != nil || tr.accounts[f.accPub] != nil || !strings.Contains(fmt.Sprint(tr.skipped[f.accPub]), "operator requires issuer to be a signing key") {
		t.Fatalf("strict, signed by the operator's own key: %v, skipped for %v", err, tr.skipped[f.accPub])
	}
	if tr, err = compileOperator(&Operator{JWTs: []string{strictJWT}, Accounts: map[string]string{f.accPub: bySigningKey}}); err != nil || tr.accounts[f.accPub] == nil {
		t.Fatalf("strict, signed by a signing key: %v", err)
	}
	// Such an account signs its users with its signing keys only.
	acc := newAccount(f.accPub, nil, AccountLimits{})
	j := newJWTAuth(tr, accountSet{f.accPub: acc}, nil, time.Now)
	token := f.userJWT(t, f.acc, func(uc *jwt.UserClaims) { uc.BearerToken = true })
	if _, fail := j.authenticate(credentials{JWT: token}, "", false); fail == nil || !strings.Contains(fail.reason, "requires a signing key") {
		t.Errorf("a user signed by the account's own key under strict usage: %+v", fail)
	}
	if err := (&Operator{Accounts: map[string]string{f.accPub: "hello"}}).checkPreload(); err == nil || !strings.Contains(err.Error(), "preload account error") {
		t.Errorf("an undecodable preload: %v", err)
	}
}

// FuzzJWTConnect feeds any jwt and sig of a CONNECT to operator-mode
// authentication. Oracle: nothing panics, and a client is let in only as
// the fixture's user whose JWT the fixture's account signed, with this
// connection's nonce signed by the user (or a bearer JWT).
func FuzzJWTConnect(f *testing.F) {
	fx := newJWTFixture(f)
	const nonce = "bm9uY2Utbm9uY2U"
	good := fx.userJWT(f, fx.acc, nil)
	bearer := fx.userJWT(f, fx.acc, func(uc *jwt.UserClaims) { uc.BearerToken = true })
	f.Add(good, fx.sign(nonce))
	f.Add(good, "")
	f.Add(bearer, "")
	f.Add(good[:len(good)-3], fx.sign(nonce))
	f.Add("eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.AAAA", "AAAA")
	f.Add("", "")
	j := fx.auth(f)
	f.Fuzz(func(t *testing.T, token, sig string) {
		id, fail := j.authenticate(credentials{JWT: token, Sig: sig}, nonce, true)
		if fail != nil {
			if id != nil || fail.reason == "" {
				t.Fatalf("refusal with identity %v or no reason", id)
			}
			return
		}
		uc, err := jwt.DecodeUserClaims(token)
		if err != nil {
			t.Fatalf("accepted a JWT that does not decode: %v", err)
		}
		if uc.Issuer != fx.accPub || id.acc.name != fx.accPub || id.name != uc.Subject {
			t.Fatalf("accepted %s issued by %s as %s", uc.Subject, uc.Issuer, id.name)
		}
		if !uc.BearerToken && verifyNonce(uc.Subject, sig, nonce) != "" {
			t.Fatal("accepted a signature that does not verify")
		}
	})
}

func TestUserWindow(t *testing.T) {
	t.Parallel()
	w, err := compileUserWindow(jwt.UserLimits{Src: []string{"10.0.0.0/8"}, Times: []jwt.TimeRange{{Start: "22:00:00", End: "02:00:00"}}, Locale: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	at := func(h int) time.Time { return time.Date(2026, 1, 1, h, 30, 0, 0, time.UTC) }
	for _, c := range []struct {
		ip   string
		hour int
		ok   bool
	}{{"10.1.2.3", 23, true}, {"10.1.2.3", 1, true}, {"10.1.2.3", 12, false}, {"192.168.0.1", 23, false}, {"", 23, false}} {
		if fail := w.admits("u", c.ip, at(c.hour)); (fail == nil) != c.ok {
			t.Errorf("%s at %d:30: %+v, want ok %v", c.ip, c.hour, fail, c.ok)
		}
	}
	if _, err := compileUserWindow(jwt.UserLimits{Times: []jwt.TimeRange{{Start: "25:00", End: "x"}}}); err == nil {
		t.Error("bad times accepted")
	}
}

// TestUserWindowClosesAt checks when a connection made in a times range
// must close: at the end of the longest range it is in, past midnight
// for a range that wraps.
func TestUserWindowClosesAt(t *testing.T) {
	t.Parallel()
	w, err := compileUserWindow(jwt.UserLimits{Times: []jwt.TimeRange{
		{Start: "22:00:00", End: "02:00:00"}, {Start: "09:00:00", End: "10:00:00"}, {Start: "09:30:00", End: "11:00:00"},
	}, Locale: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	for _, c := range []struct {
		now, want time.Time
	}{
		{at(23, 0), at(26, 0)}, // 02:00 the next day
		{at(1, 0), at(2, 0)},
		{at(9, 15), at(10, 0)},
		{at(9, 45), at(11, 0)}, // the longer of two ranges
		{at(12, 0), at(12, 0)}, // in none: at once
	} {
		if got := w.closesAt(c.now); !got.Equal(c.want) {
			t.Errorf("at %s: closes at %s, want %s", c.now.Format(time.TimeOnly), got, c.want)
		}
	}
	if src, _ := compileUserWindow(jwt.UserLimits{Src: []string{"10.0.0.0/8"}}); !src.closesAt(at(1, 0)).IsZero() {
		t.Error("a window without times closes a connection")
	}
	if !(*userWindow)(nil).closesAt(at(1, 0)).IsZero() {
		t.Error("no window closes a connection")
	}
}

// BenchmarkJWTAuthenticate measures one operator-mode CONNECT check: the
// user JWT decoded and its signature and the nonce's verified.
func BenchmarkJWTAuthenticate(b *testing.B) {
	f := newJWTFixture(b)
	j := f.auth(b)
	const nonce = "bm9uY2U"
	cr := credentials{JWT: f.userJWT(b, f.acc, nil), Sig: f.sign(nonce)}
	b.ReportAllocs()
	for b.Loop() {
		if _, fail := j.authenticate(cr, nonce, true); fail != nil {
			b.Fatal(fail.reason)
		}
	}
}

func TestOperatorExcludesConfiguredUsers(t *testing.T) {
	t.Parallel()
	f := newJWTFixture(t)
	op := &Operator{JWTs: []string{f.opJWT}}
	for _, o := range []Options{
		{Operator: op, Authorization: Authorization{Users: []User{{Name: "a", Password: "b"}}}},
		{Operator: op, Authorization: Authorization{Token: "t"}},
		{Operator: op, Accounts: []Account{{Name: "A"}}},
	} {
		if _, err := o.withOperator(); err == nil || !strings.Contains(err.Error(), "operator mode") {
			t.Errorf("%+v: error %v", o, err)
		}
	}
}

// TestUserTimesFollowTheAuthenticatorsClock checks that a user JWT's
// times are judged by the clock the JWT checks use, so that the expiry
// and the times of one connection are judged at one instant.
func TestUserTimesFollowTheAuthenticatorsClock(t *testing.T) {
	t.Parallel()
	f := newJWTFixture(t)
	j := f.auth(t)
	token := f.userJWT(t, f.acc, func(uc *jwt.UserClaims) {
		uc.Times = []jwt.TimeRange{{Start: "10:00:00", End: "11:00:00"}}
		uc.Locale = "UTC"
		uc.BearerToken = true
	})
	for _, tc := range []struct {
		at time.Time
		ok bool
	}{
		{time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC), true},
		{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), false},
	} {
		j.now = func() time.Time { return tc.at }
		a := &authenticator{jwt: j}
		id, fail := j.authenticate(credentials{JWT: token}, "", false)
		if fail != nil {
			t.Fatalf("authenticate: %+v", fail)
		}
		if got := a.now(); !got.Equal(tc.at) {
			t.Fatalf("the authenticator's clock says %v, want the JWT checks' %v", got, tc.at)
		}
		if fail := id.window.admits(id.name, "127.0.0.1", a.now()); (fail == nil) != tc.ok {
			t.Errorf("at %v: %+v, want admitted %v", tc.at, fail, tc.ok)
		}
	}
}
