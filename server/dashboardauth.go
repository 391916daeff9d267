package server

import (
	"net/http"
	"strings"
)

// Who may use the monitoring port (docs/dashboard.md, "Security").
// Reads are open unless Options.HTTPAuth; then every path but /healthz
// needs the HTTP Basic credentials of a configured user. Actions (the
// dashboard's POSTs) need, when authorization is configured, the
// credentials of a user whose permissions allow publishing to the API
// subject of the action, checked as that user's PUB would be; and they
// must come from the dashboard's own page (csrfCheck).

// dashboardHeader must be on every action: a page of another origin
// cannot send it without a CORS preflight, which the monitoring port
// never grants.
const dashboardHeader = "X-Bus-Dashboard"

// basic checks HTTP Basic credentials with the server's own rules: the
// users list (password users; an nkey user has no password to send), the
// single user, or the token as the password (any user name). Without
// authorization everyone is the server's full-rights identity.
func (a *authenticator) basic(user, pass string) (*identity, bool) {
	switch {
	case !a.required:
		return &identity{}, true
	case a.users != nil:
		e := a.users[user]
		if e == nil || e.nkey != "" || !passwordMatches(e.password, pass) {
			return nil, false
		}
		return e.id, true
	case a.token != "":
		return a.single, passwordMatches(a.token, pass)
	}
	return a.single, user == a.user && passwordMatches(a.password, pass)
}

// httpUser authenticates r: the identity, or false when authorization is
// configured and r carries no valid credentials. Failures are logged
// with the user name, never the password.
func (s *Server) httpUser(r *http.Request) (*identity, bool) {
	if !s.auth().required {
		return &identity{}, true
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return nil, false
	}
	id, ok := s.auth().basic(user, pass)
	if !ok {
		s.log.Warn("monitoring authentication failed", "user", user, "remote", r.RemoteAddr, "path", r.URL.Path)
	}
	return id, ok
}

// httpAuthGuard wraps the whole monitoring port with Options.HTTPAuth:
// without credentials a browser is asked for them; /healthz stays open
// for load balancers and probes.
func (s *Server) httpAuthGuard(next http.Handler) http.Handler {
	if !s.opts.HTTPAuth {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == healthzPath {
			next.ServeHTTP(w, r)
			return
		}
		if _, ok := s.httpUser(r); !ok {
			if !strings.HasPrefix(r.URL.Path, dashboardAPIPath) {
				// Pages and documents: let the browser ask. The
				// dashboard's own calls get JSON and show their own form.
				w.Header().Set("WWW-Authenticate", `Basic realm="bus monitoring", charset="UTF-8"`)
			}
			dashboardError(w, http.StatusUnauthorized, "this monitoring port needs the user name and password of a configured user (http_auth)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readRights are the rights the dashboard reads messages with: the
// user's with HTTPAuth (their subscribe permissions apply to what they
// see), else the server's.
func (s *Server) readRights(r *http.Request) Rights {
	if !s.opts.HTTPAuth {
		return fullRights
	}
	if id, ok := s.httpUser(r); ok {
		return id
	}
	return fullRights // unreachable: httpAuthGuard refused it
}

// csrfCheck refuses an action that a page of another origin could have
// made the browser send (with the browser's saved credentials): it must
// carry dashboardHeader, and Sec-Fetch-Site or Origin, when the browser
// sends them, must say the same origin (http.CrossOriginProtection).
func (s *Server) csrfCheck(r *http.Request) (int, string) {
	if r.Header.Get(dashboardHeader) == "" {
		return http.StatusForbidden, "actions need the " + dashboardHeader + " header: send them from the dashboard page, or set it in your HTTP client"
	}
	if err := http.NewCrossOriginProtection().Check(r); err != nil {
		return http.StatusForbidden, "cross-origin action refused: " + err.Error()
	}
	return 0, ""
}

// actionUser authenticates an action and checks that the user may publish
// to subject, the API subject it stands for. On refusal it returns the
// HTTP status and the reason.
func (s *Server) actionUser(r *http.Request, subject string) (Rights, int, string) {
	if code, why := s.csrfCheck(r); code != 0 {
		return nil, code, why
	}
	id, ok := s.httpUser(r)
	if !ok {
		return nil, http.StatusUnauthorized, "log in: actions need the user name and password of a configured user allowed to publish to " + subject
	}
	if !id.MayPublish(subject) {
		return nil, http.StatusForbidden, "user " + quoteUser(id.name) + " may not publish to " + subject
	}
	return id, 0, ""
}

func quoteUser(name string) string {
	if name == "" {
		return "(token)"
	}
	return `"` + name + `"`
}
