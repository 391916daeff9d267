package server

import (
	"bytes"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// calloutExchange is what one authorization request expects of its
// response: who may sign it, for which user and server, and how to
// open it when it is encrypted.
type calloutExchange struct {
	serverID string // the response's audience
	userKey  string // the public user key the request named: the response's and the user JWT's subject
	account  string // the callout account's name, for errors
	// signedBy reports whether key may sign the response: the
	// configured issuer, or in operator mode the callout account and
	// its signing keys.
	signedBy func(key string) bool
	// accountKey is, in operator mode, the callout account's key, which
	// a response's issuer_account must be when it names one; "" in
	// config mode.
	accountKey string
	// xkp is the server's curve key pair and serviceXKey the service's
	// public curve key when requests are encrypted; xkp nil otherwise.
	xkp         nkeys.KeyPair
	serviceXKey string
}

// jwtStart is how every JWT begins (the base64 of `{"`); an encrypted
// response does not.
const jwtStart = "eyJ"

// errCalloutTimeout is the reason of a request no service answered in
// time.
var errCalloutTimeout = errors.New("auth callout response not received in time")

// maxCalloutResponse bounds the response bus decodes: a user JWT and
// its envelope, far above what a service writes.
const maxCalloutResponse = 2 * maxJWTLen

// decodeResponse checks a callout service's answer and returns the user
// JWT's claims and the JWT itself, or why the client is refused, in the
// reference's words (its log lines). Who may have signed the user JWT is
// the caller's to check (configUser, or the account JWT in operator
// mode). It never panics on what the service sent (see
// FuzzCalloutResponse).
func (x *calloutExchange) decodeResponse(msg []byte) (*jwt.UserClaims, string, error) {
	if len(msg) == 0 {
		return nil, "", fmt.Errorf("auth callout violation: %q on account %q", "no reason supplied", x.account)
	}
	if len(msg) > maxCalloutResponse {
		return nil, "", fmt.Errorf("auth callout violation: response of %d bytes on account %q is too long", len(msg), x.account)
	}
	if x.xkp != nil && !bytes.HasPrefix(msg, []byte(jwtStart)) {
		opened, err := x.xkp.Open(msg, x.serviceXKey)
		if err != nil {
			return nil, "", fmt.Errorf("error decrypting auth callout response on account %q: %v", x.account, err)
		}
		msg = opened
	}
	rc, err := jwt.DecodeAuthorizationResponseClaims(string(msg))
	if err != nil {
		return nil, "", err
	}
	if p := claimsIssue(rc); p != "" {
		return nil, "", fmt.Errorf("authorization response had validation errors: %s", p)
	}
	switch {
	case rc.Subject != x.userKey:
		return nil, "", errors.New("auth callout violation: auth callout response is not for expected user")
	case rc.Audience != x.serverID:
		return nil, "", errors.New("auth callout violation: auth callout response is not for server")
	case !x.signedBy(rc.Issuer):
		// The reference skips this check for an encrypted response;
		// bus checks every response's signer.
		return nil, "", errors.New("auth callout signing key is unknown")
	case x.accountKey != "" && rc.IssuerAccount != "" && rc.IssuerAccount != x.accountKey:
		return nil, "", fmt.Errorf("auth callout response issuer account %q is not the callout account", rc.IssuerAccount)
	case rc.Error != "":
		return nil, "", fmt.Errorf("auth callout service returned an error: %v", rc.Error)
	}
	if len(rc.Jwt) > maxJWTLen {
		return nil, "", errors.New("user JWT too long")
	}
	uc, err := jwt.DecodeUserClaims(rc.Jwt)
	if err != nil {
		return nil, "", err
	}
	if p := claimsIssue(uc); p != "" {
		return nil, "", fmt.Errorf("error validating user JWT: %s", p)
	}
	if uc.Subject != x.userKey {
		return nil, "", fmt.Errorf("expected authorized user of %q but got %q on account %q", x.userKey, uc.Subject, x.account)
	}
	return uc, rc.Jwt, nil
}

// configUser checks who signed a user JWT a config-mode callout
// returned: the configured issuer itself, never on another account's
// behalf.
func configUser(uc *jwt.UserClaims, issuer, account string) error {
	switch {
	case uc.IssuerAccount != "":
		return fmt.Errorf("error non operator mode account %q: attempted to use issuer_account", account)
	case uc.Issuer != issuer:
		return fmt.Errorf("wrong issuer for auth callout response on account %q, expected %q got %q", account, issuer, uc.Issuer)
	}
	return nil
}

// claimsIssue is the first issue jwt's validation finds in c, time
// checks (expired, not yet valid) included, or "": the reference refuses
// a callout's JWTs on any issue.
func claimsIssue(c jwt.Claims) string {
	vr := jwt.CreateValidationResults()
	c.Validate(vr)
	for _, issue := range vr.Issues {
		return issue.Error()
	}
	return ""
}

// calloutIdentity is who the user JWT a callout returned makes the
// client: the account its audience names (config mode places users by
// audience, as the reference does), its permissions (else the account's
// default ones), connection types, limits and expiry.
// Where and when the user may connect (src, times) is checked as for any
// JWT user, by conn.authenticate.
func (s *Server) calloutIdentity(co *callout, uc *jwt.UserClaims) (*identity, error) {
	account := co.cfg.Account
	acc, defaults, ok := s.accountNamed(uc.Audience)
	if !ok {
		return nil, fmt.Errorf("no valid account %q for auth callout response on account %q: account missing", uc.Audience, account)
	}
	limits := uc.UserPermissionLimits
	if reason := unenforced(limits); reason != "" {
		return nil, errors.New(reason)
	}
	window, err := compileUserWindow(limits.UserLimits)
	if err != nil {
		return nil, fmt.Errorf("authorized user on account %q: %v", account, err)
	}
	perms := permissionsFromClaims(limits.Permissions)
	if err := perms.validate(); err != nil {
		return nil, fmt.Errorf("authorized user on account %q: permissions: %v", account, err)
	}
	id := &identity{name: uc.Subject, acc: acc, nkey: uc.Subject, fromCallout: true, window: window,
		maxSubs: jwtLimit(limits.Subs), maxPayload: jwtLimit(limits.Payload)}
	if uc.Name != "" {
		id.name = uc.Name
	}
	if id.connTypes, err = compileConnTypes(limits.AllowedConnectionTypes); err != nil {
		return nil, fmt.Errorf("authorized user on account %q using invalid connection type", account)
	}
	if uc.Expires > 0 {
		id.expires = time.Unix(uc.Expires, 0)
	}
	if perms != nil {
		id.perms = compilePermissions(perms)
	} else {
		id.perms = defaults
	}
	return id, nil
}

// accountNamed finds an account by its config name, as the callout's
// audience names it: the global account ($G: acc nil), the system
// account, or one of the accounts block, with the account's default
// permissions.
func (s *Server) accountNamed(name string) (acc *account, defaults *permissions, ok bool) {
	opts := s.liveOpts()
	switch {
	case name == globalAccount:
		// The authorization block's default permissions are its
		// users', not the global account's, as in the reference.
		return nil, nil, true
	case name != "" && name == s.sys.name:
		return s.sys, nil, true
	}
	a := s.accountSet()[name]
	if a == nil {
		return nil, nil, false
	}
	for _, cfg := range opts.Accounts {
		if cfg.Name == name {
			defaults = compilePermissions(cfg.DefaultPermissions)
		}
	}
	return a, defaults, true
}

// titleCase is err's text with its first letter upper-cased, as the
// reference logs a callout's refusal.
func titleCase(text string) string {
	r, n := utf8.DecodeRuneInString(text)
	if n == 0 {
		return text
	}
	return string(unicode.ToUpper(r)) + text[n:]
}
