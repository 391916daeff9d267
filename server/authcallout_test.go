package server

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// The decode path of a callout's answer accepts only a response for the
// request's user and server, signed by the issuer, and says why not in
// the reference's words.
func TestCalloutResponseDecode(t *testing.T) {
	t.Parallel()
	k := newCalloutFuzzKeys(t)
	other, _ := nkeys.CreateAccount()
	otherUser, _ := nkeys.CreateUser()
	otherUserPub, _ := otherUser.PublicKey()
	allow := k.response(t, "APP", "", nil)
	for _, tc := range []struct {
		name      string
		msg       []byte
		encrypted bool
		err       string // "" accepts
	}{
		{"allow", allow, false, ""},
		{"allow sealed", k.seal(t, allow), true, ""},
		{"allow in the clear though encrypted", allow, true, ""},
		{"empty", nil, false, `auth callout violation: "no reason supplied" on account "AUTH"`},
		{"service error", k.response(t, "APP", "bad password", nil), false, "auth callout service returned an error: bad password"},
		{"sealed to nobody", []byte("xkv1 not sealed"), true, "error decrypting auth callout response"},
		{"not a JWT", []byte("hello"), false, ""},
		{"expired user", k.response(t, "APP", "", func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(-time.Hour).Unix() }), false, "error validating user JWT: claim is expired"},
		{"user for another", k.response(t, "APP", "", func(uc *jwt.UserClaims) { uc.Subject = otherUserPub }), false, "expected authorized user of"},
		{"issuer_account", k.response(t, "APP", "", func(uc *jwt.UserClaims) { uc.IssuerAccount = k.issuerPub }), false, "attempted to use issuer_account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uc, _, err := k.exchange(tc.encrypted).decodeResponse(tc.msg)
			if err == nil {
				err = configUser(uc, k.issuerPub, "AUTH")
			}
			switch {
			case tc.name == "not a JWT":
				if err == nil {
					t.Fatal("accepted")
				}
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err == "" && uc.Subject != k.userPub:
				t.Fatalf("user %s", uc.Subject)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
	// Signed by another account: refused whatever the user JWT says.
	rc := jwt.NewAuthorizationResponseClaims(k.userPub)
	rc.Audience = k.serverPub
	rc.Error = "x"
	token, _ := rc.Encode(other)
	if _, _, err := k.exchange(false).decodeResponse([]byte(token)); err == nil || err.Error() != "auth callout signing key is unknown" {
		t.Errorf("another signer: %v", err)
	}
	otherServer, _ := nkeys.CreateServer()
	rc.Audience, _ = otherServer.PublicKey()
	token, _ = rc.Encode(k.issuer)
	if _, _, err := k.exchange(false).decodeResponse([]byte(token)); err == nil || !strings.Contains(err.Error(), "not for server") {
		t.Errorf("another server: %v", err)
	}
}

// The identity a callout's user JWT makes: its account, permissions,
// limits and expiry; the account's default permissions when it has none.
func TestCalloutIdentity(t *testing.T) {
	t.Parallel()
	k := newCalloutFuzzKeys(t)
	s, co := calloutFuzzServer(t, k.issuerPub)
	uc := jwt.NewUserClaims(k.userPub)
	uc.Audience = "APP"
	uc.Name = "alice"
	uc.Pub.Allow.Add("app.>")
	uc.Limits.Subs = 3
	uc.Limits.Payload = 100
	uc.Expires = time.Now().Add(time.Hour).Unix()
	id, err := s.calloutIdentity(co, uc)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case id.name != "alice" || id.acc == nil || id.acc.name != "APP":
		t.Errorf("identity %q in %v", id.name, id.acc)
	case id.maxSubs != 3 || id.maxPayload != 100 || id.expires.Unix() != uc.Expires:
		t.Errorf("limits %d %d %v", id.maxSubs, id.maxPayload, id.expires)
	case id.perms == nil || !id.perms.canPublish("app.x") || id.perms.canPublish("other"):
		t.Errorf("permissions %+v", id.perms)
	}
	uc.Audience = "$G"
	if id, err := s.calloutIdentity(co, uc); err != nil || id.acc != nil {
		t.Errorf("global account: %v %v", id, err)
	}
	uc.Audience = "NOPE"
	if _, err := s.calloutIdentity(co, uc); err == nil || !strings.Contains(err.Error(), `no valid account "NOPE"`) {
		t.Errorf("unknown account: %v", err)
	}
	uc.Audience = "APP"
	uc.Limits.Data = 10
	if _, err := s.calloutIdentity(co, uc); err == nil {
		t.Error("a data limit bus does not enforce was accepted")
	}
}

// A callout the server cannot run is refused at New, naming the key.
func TestAuthCalloutValidate(t *testing.T) {
	t.Parallel()
	issuer, _ := nkeys.CreateAccount()
	issuerPub, _ := issuer.PublicKey()
	xkp, _ := nkeys.CreateCurveKeys()
	xkey, _ := xkp.PublicKey()
	base := func() Options {
		return Options{
			Accounts:      []Account{{Name: "AUTH", Users: []User{{Name: "auth", Password: "pw"}}}, {Name: "APP"}},
			Authorization: Authorization{Callout: &AuthCallout{Issuer: issuerPub, Account: "AUTH", AuthUsers: []string{"auth"}, XKey: xkey}},
		}
	}
	if _, err := New(base()); err != nil {
		t.Fatalf("valid callout refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*AuthCallout)
		want string
	}{
		{"issuer", func(c *AuthCallout) { c.Issuer = "UXYZ" }, "auth_callout issuer"},
		{"no auth users", func(c *AuthCallout) { c.AuthUsers = nil }, "auth_callout auth_users"},
		{"unknown auth user", func(c *AuthCallout) { c.AuthUsers = []string{"nobody"} }, `auth_users: "nobody" is no configured user`},
		{"xkey", func(c *AuthCallout) { c.XKey = issuerPub }, "auth_callout xkey"},
		{"account", func(c *AuthCallout) { c.Account = "NOPE" }, `auth_callout account: "NOPE"`},
		{"allowed account", func(c *AuthCallout) { c.AllowedAccounts = []string{"NOPE"} }, `allowed account "NOPE" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			tc.edit(o.Authorization.Callout)
			if _, err := New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
