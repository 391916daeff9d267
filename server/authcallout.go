package server

import (
	"fmt"
	"slices"

	"github.com/nats-io/nkeys"
)

// Auth callout wire facts, as nats-server has them.
const (
	// authCalloutSubject is where the server sends an authorization
	// request, in the callout account; the callout service answers on
	// the request's reply subject.
	authCalloutSubject = "$SYS.REQ.USER.AUTH"
	// authRequestAudience is the audience of every authorization
	// request JWT.
	authRequestAudience = "nats-authorization-request"
	// authXKeyHeader carries the server's curve public key on an
	// encrypted request, for the service to open it and seal its answer.
	authXKeyHeader = "Nats-Server-Xkey"
)

// AuthCallout delegates authentication to a service (nats-server's
// auth_callout): a client that is not one of AuthUsers makes the server
// send a signed authorization request to $SYS.REQ.USER.AUTH in Account;
// the service answers with a user JWT signed by Issuer that says which
// account the client joins and with what permissions and limits, or
// with an error, and the client is refused (authcalloutconn.go).
type AuthCallout struct {
	// Issuer is the public account key ("A…") that signs the service's
	// responses and the user JWTs in them.
	Issuer string
	// Account is the account the service connects in, where requests
	// are sent; "" is the global account.
	Account string
	// AuthUsers are the users (names or nkeys of Authorization or any
	// account) that authenticate as configured, without the callout:
	// the service's own users. At least one is required.
	AuthUsers []string
	// XKey, when set, is the service's curve public key ("X…"): the
	// requests are encrypted to it and the responses may be.
	XKey string
	// AllowedAccounts, when set, limits the callout to the users of
	// these accounts (and clients that no configured user matches):
	// a configured user of another account connects without it.
	AllowedAccounts []string
	// BypassAuthenticated lets a client that authenticated by another
	// configured method (a user and password, an nkey, a token, a
	// certificate under verify_and_map) in without the callout, which
	// then decides only about clients no configured user matches. Off,
	// as in nats-server, every client outside AuthUsers goes through
	// the callout (nats-server #8044). bus's x_bus_bypass_authenticated.
	BypassAuthenticated bool
}

// validate checks c against the accounts and users it names, with the
// reference's words where it has them.
func (c *AuthCallout) validate(o Options) error {
	if c == nil {
		return nil
	}
	known := map[string]bool{globalAccount: true}
	if o.hasSystemAccountName() {
		known[o.SystemAccount.name()] = true
	}
	for _, a := range o.Accounts {
		known[a.Name] = true
	}
	switch {
	case o.Operator != nil:
		return fmt.Errorf("server: authorization auth_callout: in operator mode the callout is an account JWT's authorization; remove auth_callout")
	case !nkeys.IsValidPublicAccountKey(c.Issuer):
		return fmt.Errorf("server: authorization auth_callout issuer: expected callout user to be a valid public account nkey, got %q", c.Issuer)
	case len(c.AuthUsers) == 0:
		return fmt.Errorf("server: authorization auth_callout auth_users: authorization callouts require authorized users to be specified")
	case c.XKey != "" && !nkeys.IsValidPublicCurveKey(c.XKey):
		return fmt.Errorf("server: authorization auth_callout xkey: expected callout xkey to be a valid public xkey, got %q", c.XKey)
	case c.Account != "" && !known[c.Account]:
		return fmt.Errorf("server: authorization auth_callout account: %q is not a configured account", c.Account)
	}
	for _, name := range c.AllowedAccounts {
		if !known[name] || name == globalAccount {
			return fmt.Errorf("server: authorization auth_callout allowed_accounts: auth_callout allowed account %q not found in configured accounts", name)
		}
	}
	users := configuredUsers(o)
	for _, u := range c.AuthUsers {
		if !users[u] {
			// The reference only logs this; a service that cannot
			// log in would send its own login to the callout.
			return fmt.Errorf("server: authorization auth_callout auth_users: %q is no configured user", u)
		}
	}
	return nil
}

// hasSystemAccountName reports whether the system account has a name
// the callout may place users in.
func (o Options) hasSystemAccountName() bool { return o.SystemAccount.name() != "" }

// configuredUsers are the names and nkeys of every configured user.
func configuredUsers(o Options) map[string]bool {
	out := map[string]bool{}
	add := func(users []User) {
		for _, u := range users {
			out[u.label()] = true
		}
	}
	if o.Authorization.User != "" {
		out[o.Authorization.User] = true
	}
	add(o.Authorization.Users)
	add(o.SystemAccount.Users)
	for _, a := range o.Accounts {
		add(a.Users)
	}
	return out
}

// callout is a compiled AuthCallout; immutable, so readers share it.
type callout struct {
	cfg       AuthCallout
	authUsers map[string]bool
	allowed   map[string]bool // nil: every account
}

func compileCallout(c *AuthCallout) *callout {
	if c == nil {
		return nil
	}
	out := &callout{cfg: *c, authUsers: map[string]bool{}}
	out.cfg.Account = accountOrGlobal(c.Account)
	for _, u := range c.AuthUsers {
		out.authUsers[u] = true
	}
	if len(c.AllowedAccounts) > 0 {
		out.allowed = map[string]bool{}
		for _, a := range c.AllowedAccounts {
			out.allowed[a] = true
		}
	}
	return out
}

func accountOrGlobal(name string) string {
	if name == "" {
		return globalAccount
	}
	return name
}

// decides reports whether the callout decides about a client whose
// configured authentication gave id (nil: refused, for fail). As in the
// reference, an auth user's own result stands (also a refusal: an auth
// user with a wrong password is not sent to the callout); so does that of
// a configured user of an account outside AllowedAccounts. With
// BypassAuthenticated, so does every success but the no_auth_user's
// (no credentials are not another method of authenticating).
func (c *callout) decides(id *identity, fail *authFailure, noAuth *identityEntry, accName func(*identity) string) bool {
	named := ""
	switch {
	case id != nil:
		named = id.name
	case fail != nil:
		named = fail.user
	}
	if named != "" && c.authUsers[named] {
		return false
	}
	if id == nil {
		return true
	}
	if c.cfg.BypassAuthenticated && (noAuth == nil || id != noAuth.id) {
		return false
	}
	if acc := accName(id); c.allowed != nil && acc != globalAccount && !c.allowed[acc] {
		return false
	}
	return true
}

// withPublishDeny is p with subject added to its publish deny list, so
// that a user in the callout account cannot send authorization
// requests, as the reference denies them. p is not changed.
func withPublishDeny(p *permissions, subject string) *permissions {
	out := &permissions{}
	if p != nil {
		*out = *p
	}
	out.pubDeny = append(slices.Clip(out.pubDeny), subject)
	return out
}
