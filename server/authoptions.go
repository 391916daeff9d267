package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"

	"github.com/bus-dev/bus/subjects"
)

// Auth defaults, as in the reference.
const (
	// DefaultAuthTimeout is how long a connection may take to send a
	// CONNECT with valid credentials when authorization is on.
	DefaultAuthTimeout = 2 * time.Second
	// DefaultMaxUnauthenticated bounds the connections that have not yet
	// authenticated, so idle or slow-loris sockets cannot hold every slot.
	DefaultMaxUnauthenticated = 8192
	// DefaultResponseMaxMsgs and DefaultResponseExpires are what
	// allow_responses: true means: one reply per request, within 2 minutes.
	DefaultResponseMaxMsgs = 1
	DefaultResponseExpires = 2 * time.Minute
)

// Authorization is the authorization block: who may connect and what each
// user may do. The zero value turns authentication off. Exactly one way of
// authenticating is used: Token, User and Password, or Users (which may
// mix password and nkey users). It is a plain value: the server copies it
// at New and never changes it.
type Authorization struct {
	// Token every client must send as auth_token: plain text, or a bcrypt
	// hash ($2a$, $2b$, …) of it.
	Token string
	// User and Password are the single user's credentials; Password may
	// be a bcrypt hash.
	User     string
	Password string
	// Users are the individual users, each with its own permissions.
	Users []User
	// DefaultPermissions apply to every user in Users without
	// permissions of its own.
	DefaultPermissions *Permissions
	// NoAuthUser names the user in Users (a name, or an nkey) that a
	// client sending no credentials at all connects as. INFO then no
	// longer says auth_required, as in the reference.
	NoAuthUser string
	// Timeout bounds the time from accept (from the end of the TLS
	// handshake, with TLS) to a valid CONNECT; 0 means DefaultAuthTimeout,
	// or with TLS the TLS timeout and a second, as in the reference.
	Timeout time.Duration
	// Callout delegates authentication to an auth callout service
	// (authcallout.go); nil: off.
	Callout *AuthCallout
	// ReferenceStoredReads restores the reference's rule for stored
	// messages: one delivered to an inbox reaches the subscriber whatever
	// its own subject. By default bus also requires that the receiving
	// user may subscribe to the stored message's subject.
	ReferenceStoredReads bool
}

// User is one entry of Authorization.Users: a name and password, or an
// nkey.
type User struct {
	Name     string // empty for an nkey user
	Password string // plain or bcrypt; empty for an nkey user
	// Nkey is the user's public key ("U…"); the client proves it holds
	// the seed by signing the nonce sent in INFO.
	Nkey string
	// Permissions are what the user may do; nil takes
	// Authorization.DefaultPermissions, and nil there allows everything.
	Permissions *Permissions
	// AllowedConnectionTypes limits how the user may connect, by
	// nats-server's names (ConnTypeStandard, ConnTypeWebSocket …, in
	// any case); empty allows every type.
	AllowedConnectionTypes []string
}

// label is how logs name the user: its name, or its public nkey, never a
// secret.
func (u User) label() string {
	if u.Nkey != "" {
		return u.Nkey
	}
	return u.Name
}

// Permissions say which subjects a user may publish to and subscribe to.
// A nil field allows everything of its kind.
type Permissions struct {
	Publish   *SubjectPermission
	Subscribe *SubjectPermission
	// Responses, when set, lets the user publish to the reply subject of
	// each request it received, whatever Publish says, up to MaxMsgs
	// times and within Expires.
	Responses *ResponsePermission
}

// SubjectPermission is an allow and a deny list of subject patterns;
// deny wins. Subscribe entries may name a queue group after a space
// ("jobs.> workers"), which limits the entry to subscriptions in that
// group (the group may itself be a pattern, "workers.*").
//
// Allow lists follow the reference: a nil Publish.Allow allows every
// subject and a non-nil empty one allows none (as when allow_responses is
// set without publish rights); an empty Subscribe.Allow allows every
// subject.
type SubjectPermission struct {
	Allow []string
	Deny  []string
}

// ResponsePermission bounds allow_responses. Zero fields take
// DefaultResponseMaxMsgs and DefaultResponseExpires; a negative one means
// no limit of that kind.
type ResponsePermission struct {
	MaxMsgs int
	Expires time.Duration
}

// required reports whether clients must authenticate.
func (a Authorization) required() bool {
	return a.Token != "" || a.User != "" || a.Users != nil || a.Callout != nil
}

// validate reports the first setting that cannot work, with the
// reference's wording where it has one.
func (a Authorization) validate() error {
	switch {
	case a.Timeout < 0:
		return fmt.Errorf("server: authorization timeout %v is negative", a.Timeout)
	case a.Token != "" && (a.User != "" || a.Password != ""):
		return fmt.Errorf("server: authorization: cannot have a user/pass and token")
	case a.Users != nil && a.User != "":
		return fmt.Errorf("server: authorization: can not have a single user/pass and a users array")
	case a.Users != nil && a.Token != "":
		return fmt.Errorf("server: authorization: can not have a token and a users array")
	case a.Password != "" && a.User == "":
		return fmt.Errorf("server: authorization: password without a user")
	}
	if err := a.DefaultPermissions.validate(); err != nil {
		return fmt.Errorf("server: authorization default permissions: %w", err)
	}
	seen := map[string]bool{}
	for i, u := range a.Users {
		if err := u.validate(); err != nil {
			return fmt.Errorf("server: authorization users[%d]: %w", i, err)
		}
		if seen[u.label()] {
			return fmt.Errorf("server: authorization users[%d]: duplicate user %q", i, u.label())
		}
		seen[u.label()] = true
	}
	return nil
}

// validate checks one user entry of any account: a name or an nkey,
// and its permissions.
func (u User) validate() error {
	switch {
	case u.Nkey == "" && u.Name == "":
		return fmt.Errorf("user entry requires a user")
	case u.Nkey != "" && (u.Name != "" || u.Password != ""):
		return fmt.Errorf("nkey users do not take usernames or passwords")
	case u.Nkey != "" && !nkeys.IsValidPublicUserKey(u.Nkey):
		return fmt.Errorf("%q is not a valid public nkey for a user", u.Nkey)
	}
	if err := u.Permissions.validate(); err != nil {
		return fmt.Errorf("(%q) permissions: %w", u.label(), err)
	}
	if _, err := compileConnTypes(u.AllowedConnectionTypes); err != nil {
		return fmt.Errorf("(%q) allowed_connection_types: %w", u.label(), err)
	}
	return nil
}

// validate checks every pattern of p; a nil p is valid.
func (p *Permissions) validate() error {
	if p == nil {
		return nil
	}
	check := func(kind string, list []string, queues bool) error {
		for _, entry := range list {
			if _, _, err := splitPermEntry(entry, queues); err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
		}
		return nil
	}
	if p.Publish != nil {
		if err := check("publish allow", p.Publish.Allow, false); err != nil {
			return err
		}
		if err := check("publish deny", p.Publish.Deny, false); err != nil {
			return err
		}
	}
	if p.Subscribe != nil {
		if err := check("subscribe allow", p.Subscribe.Allow, true); err != nil {
			return err
		}
		if err := check("subscribe deny", p.Subscribe.Deny, true); err != nil {
			return err
		}
	}
	return nil
}

// splitPermEntry splits "subject [queue]" and checks both parts.
func splitPermEntry(entry string, queues bool) (subject, queue string, err error) {
	fields := strings.Fields(entry)
	switch {
	case len(fields) == 1:
		subject = fields[0]
	case len(fields) == 2 && queues:
		subject, queue = fields[0], fields[1]
	default:
		return "", "", fmt.Errorf("%q is not a valid subject", entry)
	}
	if !subjects.ValidSubject(subject) {
		return "", "", fmt.Errorf("%q is not a valid subject", subject)
	}
	if queue != "" && !subjects.ValidSubject(queue) {
		return "", "", fmt.Errorf("queue %q is not a valid queue", queue)
	}
	return subject, queue, nil
}

// minBcryptCost is the lowest bcrypt cost started without a warning: the
// library's default; below it a leaked config file's hashes are cheap
// to crack. The reference warns of plain text passwords only.
const minBcryptCost = bcrypt.DefaultCost

// weakHash is a configured bcrypt secret cheaper than minBcryptCost:
// whose it is, never the hash.
type weakHash struct {
	user    string // "" for the token
	account string // "" for the global account
	cost    int
}

// weakHashes lists the bcrypt secrets of a and sys cheaper than
// minBcryptCost, in configuration order.
func weakHashes(a Authorization, sys SystemAccount) []weakHash {
	var out []weakHash
	check := func(user, account, secret string) {
		if !IsBcrypt(secret) {
			return
		}
		if cost, err := bcrypt.Cost([]byte(secret)); err == nil && cost < minBcryptCost {
			out = append(out, weakHash{user: user, account: account, cost: cost})
		}
	}
	check("", "", a.Token)
	check(a.User, "", a.Password)
	for _, u := range a.Users {
		check(u.Name, "", u.Password)
	}
	for _, u := range sys.Users {
		check(u.Name, sys.name(), u.Password)
	}
	return out
}

// warnWeakHashes logs each configured bcrypt secret cheaper than
// minBcryptCost, naming its user.
func (s *Server) warnWeakHashes() {
	const why = "bcrypt cost below 10: a leaked hash is quick to crack; hash the secret again with a higher cost (bus passwd)"
	for _, w := range weakHashes(s.opts.Authorization, s.opts.SystemAccount) {
		switch {
		case w.user == "":
			s.log.Warn(why, "secret", "token", "cost", w.cost)
		case w.account != "":
			s.log.Warn(why, "user", w.user, "account", w.account, "cost", w.cost)
		default:
			s.log.Warn(why, "user", w.user, "cost", w.cost)
		}
	}
}
