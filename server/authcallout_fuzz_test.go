package server

import (
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Fixed keys of FuzzCalloutResponse, so that committed corpus entries
// keep their meaning: the callout's issuer account, the user key the
// request named, the server's and the service's curve keys, the server.
const (
	fuzzCalloutIssuerSeed  = "SAAGESAAWPZA7TPHR5ZPJOC5MANKJ5NUWY7UT5ERB72RK3JIJJXUCGM53M"
	fuzzCalloutUserSeed    = "SUAEGPOPANSKFNCIZYNQQPTCUJE7KO2GHUH3IE432DO2PA543Z6XQCIM4M"
	fuzzCalloutServerXSeed = "SXAA4OQQDZBWELGTH3L2LB75HZD4MYEEVMX2573EYIUDXXTPQCNE4WNG24"
	fuzzCalloutXSeed       = "SXALNPK6XWO6LCLZ3UHPAGSGUC7BU4NOFDDQGMGX5ZPU2O2UCJQUU5KTBY"
	fuzzCalloutServerSeed  = "SNAHEQ5VZAH5BLI3KXPN46S5M2EXVR66PZXWHUGZMTPAGQAGZEDRIVSQLI"
)

// calloutFuzzKeys are the fixed keys, decoded.
type calloutFuzzKeys struct {
	issuer, user, serverX, serviceX, server                nkeys.KeyPair
	issuerPub, userPub, serverXPub, serviceXPub, serverPub string
}

func newCalloutFuzzKeys(tb testing.TB) calloutFuzzKeys {
	tb.Helper()
	var k calloutFuzzKeys
	for _, e := range []struct {
		seed string
		kp   *nkeys.KeyPair
		pub  *string
	}{
		{fuzzCalloutIssuerSeed, &k.issuer, &k.issuerPub}, {fuzzCalloutUserSeed, &k.user, &k.userPub},
		{fuzzCalloutServerXSeed, &k.serverX, &k.serverXPub}, {fuzzCalloutXSeed, &k.serviceX, &k.serviceXPub},
		{fuzzCalloutServerSeed, &k.server, &k.serverPub},
	} {
		kp, err := nkeys.FromSeed([]byte(e.seed))
		if err != nil {
			tb.Fatal(err)
		}
		*e.kp = kp
		*e.pub, _ = kp.PublicKey()
	}
	return k
}

// exchange is what a request made with the fixed keys expects; with
// encrypted, requests were sealed to the service's key.
func (k calloutFuzzKeys) exchange(encrypted bool) *calloutExchange {
	x := &calloutExchange{serverID: k.serverPub, userKey: k.userPub, account: "AUTH",
		signedBy: func(key string) bool { return key == k.issuerPub }}
	if encrypted {
		x.xkp, x.serviceXKey = k.serverX, k.serviceXPub
	}
	return x
}

// response is a service's answer for the fixed user, into account, with
// edit applied to the user JWT (nil: none) and errText as its error.
func (k calloutFuzzKeys) response(tb testing.TB, account, errText string, edit func(*jwt.UserClaims)) []byte {
	tb.Helper()
	rc := jwt.NewAuthorizationResponseClaims(k.userPub)
	rc.Audience = k.serverPub
	rc.Error = errText
	if errText == "" {
		uc := jwt.NewUserClaims(k.userPub)
		uc.Audience = account
		if edit != nil {
			edit(uc)
		}
		var err error
		if rc.Jwt, err = uc.Encode(k.issuer); err != nil {
			tb.Fatal(err)
		}
	}
	token, err := rc.Encode(k.issuer)
	if err != nil {
		tb.Fatal(err)
	}
	return []byte(token)
}

// seal encrypts a response from the service to the server.
func (k calloutFuzzKeys) seal(tb testing.TB, msg []byte) []byte {
	tb.Helper()
	out, err := k.serviceX.Seal(msg, k.serverXPub)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// calloutFuzzServer is a server (never started) whose accounts the
// fuzzed responses may name.
func calloutFuzzServer(tb testing.TB, issuer string) (*Server, *callout) {
	tb.Helper()
	opts := Options{
		Accounts: []Account{{Name: "AUTH", Users: []User{{Name: "auth", Password: "pw"}}}, {Name: "APP"}},
		Authorization: Authorization{Users: []User{}, Callout: &AuthCallout{
			Issuer: issuer, Account: "AUTH", AuthUsers: []string{"auth"},
		}},
	}
	s, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s, s.auth().callout
}

// FuzzCalloutResponse feeds any bytes to the decode path of a callout
// service's answer, in the clear and encrypted, and what it accepts to
// the identity it makes. Oracle: nothing panics, and only a response
// for the request's user, signed by the issuer, is accepted, into an
// account that exists.
func FuzzCalloutResponse(f *testing.F) {
	k := newCalloutFuzzKeys(f)
	allow := k.response(f, "APP", "", func(uc *jwt.UserClaims) {
		uc.Pub.Allow.Add("app.>")
		uc.Sub.Deny.Add("secret.>")
		uc.AllowedConnectionTypes.Add(jwt.ConnectionTypeStandard)
	})
	for _, seed := range [][]byte{
		allow,
		k.response(f, "APP", "bad password", nil),
		k.response(f, "NOPE", "", nil),
		k.response(f, "$G", "", func(uc *jwt.UserClaims) { uc.Pub.Allow.Add("bad..subject") }),
		k.response(f, "APP", "", func(uc *jwt.UserClaims) { uc.Times = []jwt.TimeRange{{Start: "25:00:00", End: "x"}} }),
		{},
		[]byte("eyJ"),
		[]byte("eyJhbGciOiJlZDI1NTE5LW5rZXkiLCJ0eXAiOiJKV1QifQ.e30.AAAA"),
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Add(k.seal(f, allow), true)
	s, co := calloutFuzzServer(f, k.issuerPub)
	f.Fuzz(func(t *testing.T, msg []byte, encrypted bool) {
		uc, _, err := k.exchange(encrypted).decodeResponse(msg)
		if err != nil || configUser(uc, k.issuerPub, "AUTH") != nil {
			return
		}
		if uc.Subject != k.userPub || uc.Issuer != k.issuerPub {
			t.Fatalf("accepted a user JWT for %s signed by %s", uc.Subject, uc.Issuer)
		}
		id, err := s.calloutIdentity(co, uc)
		if err != nil {
			return
		}
		if _, _, ok := s.accountNamed(uc.Audience); !ok || !id.fromCallout {
			t.Fatalf("identity in account %q, which does not exist", uc.Audience)
		}
	})
}
