package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Keys generated once for these tests; any valid public keys would do.
const (
	testCalloutIssuer = "AC6LO45YIOPFFZNCA5EJ52XJUZEM5GSSDGZMTM4XODJQUWWCHX2752O3"
	testCalloutXKey   = "XBHXZRWUCESJSLA6RI2ODSVRJ6EWUGXY2SYQZBOTQBQ3QIBLDQQRZEYY"
)

func TestLoadAuthCallout(t *testing.T) {
	t.Parallel()
	want := &AuthCallout{
		Issuer: testCalloutIssuer, Account: "AUTH", AuthUsers: []string{"auth", "auth2"},
		XKey: testCalloutXKey, AllowedAccounts: []string{"APP"}, BypassAuthenticated: true,
	}
	path := writeConfig(t, "nats.conf", `
accounts { AUTH { users: [ {user: auth, password: pw}, {user: auth2, password: pw} ] }, APP {} }
authorization {
  auth_callout {
    issuer: `+testCalloutIssuer+`
    account: AUTH
    auth_users: [ auth, auth2 ]
    xkey: `+testCalloutXKey+`
    allowed_accounts: [ APP ]
    x_bus_bypass_authenticated: true
  }
}
`)
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Authorization == nil || !reflect.DeepEqual(cfg.Authorization.Callout, want) {
		t.Fatalf("got %+v, want %+v", cfg.Authorization, want)
	}
}

func TestLoadAuthCalloutErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, block string
		key         string
		err         error
	}{
		{"issuer not an account key", `issuer: UBAD, auth_users: [a]`, "authorization.auth_callout.issuer", ErrBadValue},
		{"issuer missing", `auth_users: [a]`, "authorization.auth_callout.issuer", ErrBadValue},
		{"auth_users missing", `issuer: ` + testCalloutIssuer, "authorization.auth_callout.auth_users", ErrBadValue},
		{"auth_users not names", `issuer: ` + testCalloutIssuer + `, auth_users: [ 1, 2 ]`, "authorization.auth_callout.auth_users[0]", ErrBadValue},
		{"xkey not a curve key", `issuer: ` + testCalloutIssuer + `, auth_users: [a], xkey: ` + testCalloutIssuer, "authorization.auth_callout.xkey", ErrBadValue},
		{"bypass not a boolean", `issuer: ` + testCalloutIssuer + `, auth_users: [a], x_bus_bypass_authenticated: sometimes`, "authorization.auth_callout.x_bus_bypass_authenticated", ErrBadValue},
		{"unknown key", `issuer: ` + testCalloutIssuer + `, auth_users: [a], timeout: 3`, "authorization.auth_callout.timeout", ErrUnknownKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, "nats.conf", "authorization {\n auth_callout {\n "+strings.ReplaceAll(tc.block, ", a", "\n a")+"\n }\n}\n")
			_, err := Load(path, nil)
			for _, ke := range keyErrors(t, err) {
				if ke.Key == tc.key && errors.Is(ke, tc.err) {
					return
				}
			}
			t.Fatalf("got %v, want %v naming %s", err, tc.err, tc.key)
		})
	}
}
