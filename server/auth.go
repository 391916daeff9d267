package server

import (
	"crypto/rand"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"
)

// identity is who a connection authenticated as. Connections of one user
// share it; it is immutable.
type identity struct {
	name  string       // user name or public nkey, for logs; "" for a token or no auth
	perms *permissions // nil allows everything
	// connTypes are the connection types the user may connect as; nil
	// allows every type (conntypes.go).
	connTypes map[string]bool
	// acc is the account the user is in (account.go), whose subject
	// space its connections live in; nil for the global account.
	acc *account
	// How the user was configured, for Reload to tell whether it still
	// is (reload.go): its nkey, its password or token as written (plain
	// or bcrypt), and whether it is the token or single user.
	nkey   string
	secret string
	single bool
	// fromJWT: an operator-mode user; secret is its user JWT (jwtauth.go),
	// issuer the key that signed it (the account's or a signing key) and
	// bearer whether it is a bearer token (which /connz does not show).
	fromJWT bool
	issuer  string
	bearer  bool
	// window is where and when a JWT user may connect from (src, times);
	// nil: anywhere, any time. maxSubs and maxPayload are its JWT's
	// limits, 0 for none (the lower of them and the account's holds).
	window              *userWindow
	maxSubs, maxPayload int
	// expires is when the user JWT expires; zero for never.
	expires time.Time
	// fromCallout: the auth callout let the user in (authcallout*.go).
	fromCallout bool
}

// authenticator checks a CONNECT's credentials against the authorization
// block. It is built once at New and immutable, so every reader goroutine
// uses it without locking.
type authenticator struct {
	required bool // clients must authenticate
	nonce    bool // INFO carries a nonce for nkey users to sign
	tlsMap   bool // users are named by their client certificates
	token    string
	user     string
	password string
	users    map[string]*identityEntry // by name
	nkeys    map[string]*identityEntry // by public key
	noAuth   *identityEntry            // who a client without credentials is; nil if nobody
	single   *identity                 // the identity of token and single-user clients
	// The accounts' users beside a token or single user (else they are
	// in users and nkeys); see addAccountUsers.
	sysUsers, sysNkeys map[string]*identityEntry
	// jwt authenticates every client in operator mode (jwtauth.go).
	jwt *jwtAuth
	// callout decides about clients when the auth callout is on
	// (authcallout.go); nil when off.
	callout *callout

	padOnce sync.Once // makes pad on first use, once every user is in
	pad     string    // see padFor
	// checked, when set (by tests), hears every checkPassword call: a
	// test sees that each refusal compared a password.
	checked func(password string, known bool)
}

// identityEntry is one configured user with its compiled identity.
type identityEntry struct {
	password string // plain or bcrypt; "" for nkey users
	nkey     string
	id       *identity
}

// newAuthenticator compiles a; a was validated. The accounts' users
// are added by addAccountUsers (Server.newAuthenticatorFor).
func newAuthenticator(a Authorization, tlsMap bool) *authenticator {
	au := &authenticator{
		required: a.required(),
		token:    a.Token,
		user:     a.User,
		password: a.Password,
		single:   &identity{name: a.User, secret: a.Token + a.Password, single: true}, // one of them is set
		// verify_and_map maps to these users or, without them, to the
		// accounts' (addAccountUsers), as the reference does.
		tlsMap: tlsMap,
	}
	if a.Users == nil {
		return au
	}
	au.users = map[string]*identityEntry{}
	au.nkeys = map[string]*identityEntry{}
	defaults := compilePermissions(a.DefaultPermissions)
	for _, u := range a.Users {
		perms := defaults
		if u.Permissions != nil {
			perms = compilePermissions(u.Permissions)
		}
		e := &identityEntry{password: u.Password, nkey: u.Nkey, id: &identity{name: u.label(), perms: perms, nkey: u.Nkey, secret: u.Password}}
		e.id.connTypes, _ = compileConnTypes(u.AllowedConnectionTypes) // validated
		if u.Nkey != "" {
			au.nkeys[u.Nkey] = e
		} else {
			au.users[u.Name] = e
		}
	}
	au.nonce = len(au.nkeys) > 0
	if a.NoAuthUser != "" {
		au.noAuth = au.users[a.NoAuthUser]
		if au.noAuth == nil {
			au.noAuth = au.nkeys[a.NoAuthUser]
		}
	}
	return au
}

// credentials are the CONNECT fields that authenticate.
type credentials struct {
	User  string `json:"user"`
	Pass  string `json:"pass"`
	Token string `json:"auth_token"`
	Nkey  string `json:"nkey"`
	Sig   string `json:"sig"`
	JWT   string `json:"jwt"`
}

// authFailure says why credentials were refused, for the log; it never
// holds a secret.
type authFailure struct {
	user   string // the user or nkey the client claimed, if any
	reason string
}

// authenticate checks cr, with nonce the one sent in this connection's
// INFO. It returns the identity, or why it refused.
func (a *authenticator) authenticate(cr credentials, nonce string, cert *x509.Certificate) (*identity, *authFailure) {
	if !a.required {
		return &identity{}, nil
	}
	if a.jwt != nil {
		return a.jwt.authenticate(cr, nonce, true)
	}
	if a.users != nil {
		return a.authenticateUser(cr, nonce, cert)
	}
	if a.sysUsers != nil {
		if id, fail, named := a.authenticateSystem(cr, nonce); named {
			return id, fail
		}
		if a.token == "" && a.user == "" {
			// Only the system account has users.
			if cr.User == "" {
				return nil, &authFailure{reason: "no credentials"}
			}
			a.checkPassword("", false, cr.Pass)
			return nil, &authFailure{user: cr.User, reason: "unknown user"}
		}
	}
	if a.token != "" {
		if !passwordMatches(a.token, cr.Token) {
			return nil, &authFailure{reason: "wrong or missing token"}
		}
		return a.single, nil
	}
	known := cr.User == a.user
	if !a.checkPassword(a.password, known, cr.Pass) {
		if !known {
			return nil, &authFailure{user: cr.User, reason: "unknown user"}
		}
		return nil, &authFailure{user: cr.User, reason: "wrong password"}
	}
	return a.single, nil
}

// authenticateUser checks cr against the users list, in the reference's
// order: an nkey first, then a user name; no credentials at all take the
// no_auth_user.
func (a *authenticator) authenticateUser(cr credentials, nonce string, cert *x509.Certificate) (*identity, *authFailure) {
	if a.tlsMap && (cr.Nkey == "" || len(a.nkeys) == 0) {
		// The verified certificate names the user; what CONNECT says
		// about users is not consulted, as in the reference.
		return a.mapCertificate(cert)
	}
	noSecret := cr.User == "" && cr.Pass == "" && cr.Token == ""
	// No credentials make the no_auth_user; an nkey sent counts as a
	// credential only when nkey users exist, as in the reference.
	if a.noAuth != nil && noSecret && (cr.Nkey == "" || a.noAuth.nkey == "" && len(a.nkeys) == 0) {
		return a.noAuth.id, nil
	}
	if cr.Nkey != "" && len(a.nkeys) > 0 {
		e := a.nkeys[cr.Nkey]
		if e == nil {
			return nil, &authFailure{user: cr.Nkey, reason: "unknown nkey"}
		}
		if reason := verifyNonce(cr.Nkey, cr.Sig, nonce); reason != "" {
			return nil, &authFailure{user: cr.Nkey, reason: reason}
		}
		return e.id, nil
	}
	if cr.User == "" {
		return nil, &authFailure{reason: "no credentials"}
	}
	e := a.users[cr.User]
	password := ""
	if e != nil {
		password = e.password
	}
	if !a.checkPassword(password, e != nil, cr.Pass) {
		if e == nil {
			return nil, &authFailure{user: cr.User, reason: "unknown user"}
		}
		return nil, &authFailure{user: cr.User, reason: "wrong password"}
	}
	return e.id, nil
}

// mapCertificate finds the user a verified client certificate names: by
// email address, DNS name, URI, then subject, the reference's order.
func (a *authenticator) mapCertificate(cert *x509.Certificate) (*identity, *authFailure) {
	if cert == nil {
		return nil, &authFailure{reason: "no client certificate to map"}
	}
	var names []string
	names = append(names, cert.EmailAddresses...)
	names = append(names, cert.DNSNames...)
	for _, u := range cert.URIs {
		names = append(names, u.String())
	}
	names = append(names, cert.Subject.ToRDNSequence().String())
	for _, n := range names {
		if e := a.users[n]; e != nil {
			return e.id, nil
		}
	}
	// A user named by the subject's attributes in another order
	// ("O=acme,CN=alice"), as the reference accepts.
	subject := subjectAttrs(cert)
	for name, e := range a.users {
		if attrs, ok := parseDN(name); ok && sameDN(attrs, subject) {
			return e.id, nil
		}
	}
	return nil, &authFailure{user: cert.Subject.String(), reason: "certificate names no user"}
}

// verifyNonce checks that sig (base64, URL or standard alphabet) is the
// nonce signed by the key whose public half is pub; it returns why not,
// or "".
func verifyNonce(pub, sig, nonce string) string {
	if sig == "" {
		return "signature missing"
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		if raw, err = base64.StdEncoding.DecodeString(sig); err != nil {
			return "signature not valid base64"
		}
	}
	kp, err := nkeys.FromPublicKey(pub)
	if err != nil {
		return "nkey not valid"
	}
	if err := kp.Verify([]byte(nonce), raw); err != nil {
		return "signature not verified"
	}
	return ""
}

// bcryptPrefix matches the bcrypt hash versions a password or token may
// be written in.
var bcryptPrefix = regexp.MustCompile(`^\$2[abxy]\$\d{2}\$.*`)

// IsBcrypt reports whether a configured password or token is a bcrypt
// hash rather than plain text.
func IsBcrypt(secret string) bool {
	return strings.HasPrefix(secret, "$") && bcryptPrefix.MatchString(secret)
}

// passwordMatches compares what a client sent with what is configured: by
// bcrypt when the configured value is a hash, else in constant time.
func passwordMatches(configured, sent string) bool {
	if IsBcrypt(configured) {
		return bcrypt.CompareHashAndPassword([]byte(configured), []byte(sent)) == nil
	}
	return subtle.ConstantTimeCompare([]byte(configured), []byte(sent)) == 1
}

// checkPassword reports whether sent is a user's password; known is
// false when no user has the name sent. When the configured passwords
// are bcrypt, every check costs one bcrypt compare, an unknown user's
// and a plain password's too, so that response times do not tell which
// user names exist (security issue #22).
func (a *authenticator) checkPassword(password string, known bool, sent string) bool {
	if a.checked != nil {
		a.checked(password, known)
	}
	if pad := a.padFor(password, known); pad != "" {
		_ = bcrypt.CompareHashAndPassword([]byte(pad), []byte(sent)) // for the time it takes
	}
	return known && passwordMatches(password, sent)
}

// padFor is the bcrypt hash a check of password (known false: no such
// user) also compares, only to take as long as a bcrypt check: "" when
// password is a bcrypt hash itself, or no configured password is one.
// The hash has the configured cost (the most common one when users'
// costs differ) and matches no password in practice; its result is
// never used.
func (a *authenticator) padFor(password string, known bool) string {
	if known && IsBcrypt(password) {
		return ""
	}
	a.padOnce.Do(func() { a.pad = padHash(a.bcryptCost()) })
	return a.pad
}

// bcryptCost is the cost most configured bcrypt passwords have (the
// higher on a tie), 0 when none is bcrypt.
func (a *authenticator) bcryptCost() int {
	counts := map[int]int{}
	count := func(password string) {
		if !IsBcrypt(password) {
			return
		}
		if cost, err := bcrypt.Cost([]byte(password)); err == nil {
			counts[cost]++
		}
	}
	count(a.password)
	for _, users := range []map[string]*identityEntry{a.users, a.sysUsers} {
		for _, e := range users {
			count(e.password)
		}
	}
	best := 0
	for cost, n := range counts {
		if n > counts[best] || n == counts[best] && cost > best {
			best = cost
		}
	}
	return best
}

// padHash is a well-formed bcrypt hash of cost (salt and digest made
// once at cost 4 from a fixed text), "" for cost 0. Comparing with it
// runs the whole key schedule of that cost, as a real hash does.
func padHash(cost int) string {
	if cost == 0 {
		return ""
	}
	return fmt.Sprintf("$2a$%02d$", cost) + "OVRXOvGSM7xiTPJk2mQDVuxq6WTxWri5BqOifUSSzwQJdmdOET6wK"
}

// nonceRawLen is the nonce's size before encoding, as in the reference
// (15 characters in INFO).
const nonceRawLen = 11

// newNonce returns a fresh random nonce for one connection's INFO.
func newNonce() string {
	var raw [nonceRawLen]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(raw[:])
}
