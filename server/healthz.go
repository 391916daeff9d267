package server

import (
	"fmt"
	"net/http"
)

// HealthStatus is the /healthz document. The HTTP status carries the
// code; status_code is left out of the body, as the reference leaves it.
type HealthStatus struct {
	Status string        `json:"status"`
	Error  string        `json:"error,omitempty"`
	Errors []HealthError `json:"errors,omitempty"`
}

// HealthError is one problem in a details=true answer.
type HealthError struct {
	Type    string `json:"type"` // as the reference: JETSTREAM, STREAM, ...
	Account string `json:"account,omitempty"`
	Stream  string `json:"stream,omitempty"`
	Error   string `json:"error,omitempty"`
}

// HealthzOptions are /healthz's query parameters.
// The JSON names are the reference's, for a $SYS.REQ request's body.
type HealthzOptions struct {
	JSEnabledOnly bool `json:"js-enabled-only,omitempty"` // only check that JetStream is on, when configured
	JSServerOnly  bool `json:"js-server-only,omitempty"`  // check the server only, not JetStream
	Details       bool `json:"details,omitempty"`         // list every problem in errors
}

// Healthz checks the server: ok, or 503 "unavailable" naming the streams
// that could not be opened (every other stream is being served). It
// returns the HTTP status to answer with.
func (s *Server) Healthz(o HealthzOptions) (HealthStatus, int) {
	h := HealthStatus{Status: "ok"}
	if o.JSServerOnly || o.JSEnabledOnly || s.js == nil {
		// JetStream is on whenever it is configured: Start fails
		// otherwise.
		return h, http.StatusOK
	}
	for _, d := range s.js.Damaged() {
		text := fmt.Sprintf("JetStream stream '%s > %s' could not be recovered", globalAccount, d.Name)
		if !o.Details {
			return HealthStatus{Status: "unavailable", Error: text}, http.StatusServiceUnavailable
		}
		h.Errors = append(h.Errors, HealthError{Type: "STREAM", Account: globalAccount, Stream: d.Name, Error: text})
	}
	// bus's own: a stream served but no longer accepting writes.
	for _, d := range s.js.Fenced() {
		text := fmt.Sprintf("JetStream stream '%s > %s' is not accepting writes: %s", globalAccount, d.Name, d.Error)
		if !o.Details {
			return HealthStatus{Status: "unavailable", Error: text}, http.StatusServiceUnavailable
		}
		h.Errors = append(h.Errors, HealthError{Type: "STREAM", Account: globalAccount, Stream: d.Name, Error: text})
	}
	if len(h.Errors) > 0 {
		h.Status = "error"
		return h, http.StatusServiceUnavailable
	}
	return h, http.StatusOK
}

func (s *Server) serveHealthz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	o := HealthzOptions{
		JSEnabledOnly: q.bool("js-enabled-only") || q.bool("js-enabled"),
		JSServerOnly:  q.bool("js-server-only"),
		Details:       q.bool("details"),
	}
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	h, code := s.Healthz(o)
	writeJSONStatus(w, code, h)
}
