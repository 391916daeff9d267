package server

import (
	"crypto/subtle"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

// The monitoring port's HTTP Basic login (docs/dashboard.md, "Security"):
// a configured user's name and password, checked with the server's
// password rules (passwordMatches), in a time that does not tell whether
// the user exists: a name that cannot log in still has its password
// compared, with a decoy of the users' bcrypt cost (security issue #22).
// The client port's CONNECT is checked in auth.go, not here.

// httpLogin checks HTTP Basic credentials against one authenticator.
// Immutable; Server.httpLogin builds one per authenticator, so a reload
// gets a new one.
type httpLogin struct {
	auth *authenticator
	// decoy is what the password is compared with when the name cannot
	// log in: a bcrypt hash of the highest cost among the configured
	// bcrypt passwords, else a plain string (then every comparison is a
	// constant-time one, which costs nanoseconds either way).
	decoy string
	// matches is passwordMatches; a field so that a test sees that
	// every refusal compared a password.
	matches func(configured, sent string) bool
}

// decoyTail is the salt and hash of a bcrypt hash of a password nobody
// has; decoyHash puts any cost in front of it. bcrypt spends the cost's
// rounds on the salt before it compares, whatever the hash holds.
const decoyTail = "JOfO2IEhBm8zVzd.5b/zxe6H5C4sXnGRtkiJYJd5MVfm8gVakW3l2"

// plainDecoy is the decoy when no password is bcrypt.
const plainDecoy = "bus: no user has this password"

func decoyHash(cost int) string { return fmt.Sprintf("$2a$%02d$%s", cost, decoyTail) }

func newHTTPLogin(a *authenticator) *httpLogin {
	cost := 0
	for _, users := range []map[string]*identityEntry{a.users, a.sysUsers} {
		for _, e := range users {
			if !IsBcrypt(e.password) {
				continue
			}
			if c, err := bcrypt.Cost([]byte(e.password)); err == nil {
				cost = max(cost, c)
			}
		}
	}
	decoy := plainDecoy
	if cost > 0 {
		decoy = decoyHash(cost)
	}
	return &httpLogin{auth: a, decoy: decoy, matches: passwordMatches}
}

// check authenticates user and pass: the users list (password users),
// the single user, or the token as the password (any user name).
// Without authorization everyone is the server's full-rights identity.
// Refused: unknown names, nkey users (no password to send), and the
// system account's users, whose rights are in their own account's
// subject space, not the streams the dashboard shows.
func (l *httpLogin) check(user, pass string) (*identity, bool) {
	a := l.auth
	switch {
	case !a.required:
		return &identity{}, true
	case a.users != nil:
		e := a.users[user]
		if e == nil || e.nkey != "" || e.id.system {
			l.matches(l.decoy, pass)
			return nil, false
		}
		if !l.matches(e.password, pass) {
			return nil, false
		}
		return e.id, true
	case a.token != "":
		if !l.matches(a.token, pass) {
			return nil, false
		}
		return a.single, true
	case a.user != "":
		// The password is compared whatever the name, so that a wrong
		// name costs what a wrong password does.
		nameOK := subtle.ConstantTimeCompare([]byte(user), []byte(a.user)) == 1
		if !l.matches(a.password, pass) || !nameOK {
			return nil, false
		}
		return a.single, true
	}
	// Only the system account has users: nobody logs in here.
	l.matches(l.decoy, pass)
	return nil, false
}

// httpLogin is the login for the current authenticator, built on first
// use after New or a reload.
func (s *Server) httpLogin() *httpLogin {
	a := s.auth()
	if l := s.mon.login.Load(); l != nil && l.auth == a {
		return l
	}
	l := newHTTPLogin(a)
	s.mon.login.Store(l)
	return l
}
