package monitor

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"

	"github.com/bus-dev/bus/subjects"
)

// The web dashboard (docs/dashboard.md) at "/" on the monitoring port: a
// page, a script and a style sheet embedded in the binary (server/web),
// which poll the JSON below every two seconds. The counters need
// nothing beyond Source's counters and JetStream snapshot; stored
// messages and actions go through the JetStream API as the logged-in
// user (Source.Request: dashboardapi.go, dashboardactions.go). The files:
//
//	dashboard.go         routes, the embedded assets, JSON answers
//	dashboardauth.go     who may read and act; the CSRF guard (the login
//	                     itself is Source.Authenticate)
//	dashboarddata.go     the state document and the message lists
//	dashboardactions.go  purge, delete a message, redrive
//	dashboardapi.go      API requests through Source.Request
//	dashboardlag.go      the sampled lag and traffic history

// dashboardAPIPath prefixes the dashboard's JSON.
const dashboardAPIPath = "/dashboard/api/"

// webFiles are the dashboard's assets. Read-only.
//
//go:embed web
var webFiles embed.FS

// dashboardRoutes registers the page, its assets and its JSON on mux.
func (m *Server) dashboardRoutes(mux *http.ServeMux) {
	web, _ := fs.Sub(webFiles, "web") // "web" is embedded: cannot fail
	assets := http.FileServerFS(web)
	page := func(w http.ResponseWriter, r *http.Request) {
		m.count("/")
		securityHeaders(w)
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, web, "index.html")
	}
	mux.HandleFunc("GET /{$}", page)
	mux.Handle("GET /dashboard/assets/", http.StripPrefix("/dashboard/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		w.Header().Set("Cache-Control", "no-cache")
		assets.ServeHTTP(w, r)
	})))
	api := func(method, path string, h http.HandlerFunc) {
		mux.HandleFunc(method+" "+dashboardAPIPath+path, func(w http.ResponseWriter, r *http.Request) {
			securityHeaders(w)
			w.Header().Set("Cache-Control", "no-store")
			h(w, r)
		})
	}
	api("GET", "state", m.serveDashboardState)
	api("GET", "streams/{stream}/messages", m.serveDashboardMessages)
	api("GET", "streams/{stream}/messages/{seq}", m.serveDashboardMessage)
	api("POST", "streams/{stream}/purge", m.dashboardPurge)
	api("POST", "streams/{stream}/messages/{seq}/delete", m.dashboardDelete)
	api("POST", "streams/{stream}/redrive", m.dashboardRedrive)
}

// securityHeaders keep the page from running anything but its own files
// and from being framed by another page (to click its buttons).
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// dashboardJSON answers with v. Unlike the reference's endpoints it does
// not allow other origins: the page is served from the same one.
func dashboardJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to do
}

// dashboardError answers {"error":{"code":…,"description":…}}.
func dashboardError(w http.ResponseWriter, code int, description string) {
	dashboardJSON(w, code, map[string]any{"error": jsError{Code: code, Description: description}})
}

// dashboardFail answers with err: an API error keeps its code (400, 404,
// 503 …), anything else is a 503 (JetStream off, no answer in time).
func dashboardFail(w http.ResponseWriter, err error) {
	var e *jsError
	if errors.As(err, &e) {
		code := e.Code
		if code < 400 || code > 599 {
			code = http.StatusBadGateway
		}
		dashboardJSON(w, code, map[string]any{"error": e})
		return
	}
	dashboardError(w, http.StatusServiceUnavailable, err.Error())
}

// streamParam reads and checks the {stream} of a path, answering 400
// when it cannot be a stream name.
func streamParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("stream")
	if !subjects.ValidName(name) {
		dashboardError(w, http.StatusBadRequest, "invalid stream name "+jsonQuote(name))
		return "", false
	}
	return name, true
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
