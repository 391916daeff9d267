package monitor

import (
	"context"
	"net/http"
	"strings"
)

// Who may use the monitoring port (docs/dashboard.md, "Security").
// Without authorization everything is open, as the API itself is. With
// it, the counters (the state document, /varz, /jsz …) stay open unless
// Options.HTTPAuth, which puts every path but /healthz behind the HTTP
// Basic login (Source.Authenticate, the server's dashboardlogin.go); stored messages and actions always
// need that login. Messages are read, and actions made, through the API
// as the logged-in user, so the API applies that user's rights; an
// action must also be allowed to publish to its API subject, checked as
// that user's PUB would be, and come from the dashboard's own page
// (csrfCheck).

// dashboardHeader must be on every action: a page of another origin
// cannot send it without a CORS preflight, which the monitoring port
// never grants.
const dashboardHeader = "X-Bus-Dashboard"

// loginKey holds, in a request's context, the Rights httpAuthGuard
// authenticated, so that a handler does not compare the password again.
type loginKey struct{}

// httpUser authenticates r: the user's Rights, or false when
// authorization is configured and r carries no valid credentials.
// Failures are logged with the user name, never the password.
func (m *Server) httpUser(r *http.Request) (Rights, bool) {
	if id, ok := r.Context().Value(loginKey{}).(Rights); ok {
		return id, true
	}
	if !m.src.AuthRequired() {
		return m.src.Authenticate("", "") // full rights: nothing is compared
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return nil, false
	}
	id, ok := m.src.Authenticate(user, pass)
	if !ok {
		m.log.Warn("monitoring authentication failed", "user", user, "remote", r.RemoteAddr, "path", r.URL.Path)
	}
	return id, ok
}

// httpAuthGuard wraps the whole monitoring port with Options.HTTPAuth:
// without credentials a browser is asked for them; /healthz stays open
// for load balancers and probes.
func (m *Server) httpAuthGuard(next http.Handler) http.Handler {
	if !m.opts.HTTPAuth {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == healthzPath {
			next.ServeHTTP(w, r)
			return
		}
		id, ok := m.httpUser(r)
		if !ok {
			if !strings.HasPrefix(r.URL.Path, dashboardAPIPath) {
				// Pages and documents: let the browser ask. The
				// dashboard's own calls get JSON and show their own form.
				w.Header().Set("WWW-Authenticate", `Basic realm="bus monitoring", charset="UTF-8"`)
			}
			dashboardError(w, http.StatusUnauthorized, "this monitoring port needs the user name and password of a configured user (http_auth)")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loginKey{}, id)))
	})
}

// messageReader is who reads stored messages for r: anyone, with the
// server's rights, without authorization (the API is as open); else the
// logged-in user, whose subscribe permissions the API applies to each
// message's subject. Without a valid login it answers 401 and false.
func (m *Server) messageReader(w http.ResponseWriter, r *http.Request) (Rights, bool) {
	if !m.src.AuthRequired() {
		return m.src.ServerRights(), true
	}
	id, ok := m.httpUser(r)
	if !ok {
		dashboardError(w, http.StatusUnauthorized, "log in to read stored messages: with authorization configured they are shown only to a user of it "+
			"(user name and password, or the token as the password), with that user's subscribe permissions; http_auth: true also protects the rest of the monitoring port")
		return nil, false
	}
	return id, true
}

// csrfCheck refuses an action that a page of another origin could have
// made the browser send (with the browser's saved credentials): it must
// carry dashboardHeader, and Sec-Fetch-Site or Origin, when the browser
// sends them, must say the same origin (http.CrossOriginProtection).
func csrfCheck(r *http.Request) (int, string) {
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
func (m *Server) actionUser(r *http.Request, subject string) (Rights, int, string) {
	if code, why := csrfCheck(r); code != 0 {
		return nil, code, why
	}
	id, ok := m.httpUser(r)
	if !ok {
		return nil, http.StatusUnauthorized, "log in: actions need the user name and password of a configured user allowed to publish to " + subject
	}
	if !id.MayPublish(subject) {
		return nil, http.StatusForbidden, "user " + quoteUser(id.User()) + " may not publish to " + subject
	}
	return id, 0, ""
}

func quoteUser(name string) string {
	if name == "" {
		return "(token)"
	}
	return `"` + name + `"`
}
