package server

import "crypto/subtle"

// The monitoring port's HTTP Basic login (docs/dashboard.md, "Security"):
// a configured user's name and password, checked by checkPassword as a
// CONNECT's are, so that a name that cannot log in costs what a wrong
// password does (security issue #22).

// httpLogin checks HTTP Basic credentials: the users list (password
// users), the single user, or the token as the password (any user
// name). Without authorization everyone is the server's full-rights
// identity. Refused: unknown names, nkey users (no password to send), and
// the system account's users, whose rights are in their own account's
// subject space, not the streams the dashboard shows.
func (a *authenticator) httpLogin(user, pass string) (*identity, bool) {
	switch {
	case !a.required:
		return &identity{}, true
	case a.users != nil:
		e := a.users[user]
		known := e != nil && e.nkey == "" && e.id.acc == nil
		password := ""
		if known {
			password = e.password
		}
		if !a.checkPassword(password, known, pass) {
			return nil, false
		}
		return e.id, true
	case a.token != "":
		if !a.checkPassword(a.token, true, pass) {
			return nil, false
		}
		return a.single, true
	case a.user != "":
		// The password is compared whatever the name, so that a wrong
		// name costs what a wrong password does.
		nameOK := subtle.ConstantTimeCompare([]byte(user), []byte(a.user)) == 1
		if !a.checkPassword(a.password, true, pass) || !nameOK {
			return nil, false
		}
		return a.single, true
	}
	// Only the system account has users: nobody logs in here.
	a.checkPassword("", false, pass)
	return nil, false
}
