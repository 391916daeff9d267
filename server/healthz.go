package server

import (
	"fmt"
	"net/http"

	"github.com/bus-dev/bus/server/monitor"
)

// The /healthz document and its options (see server/monitor).
type (
	HealthStatus   = monitor.HealthStatus
	HealthError    = monitor.HealthError
	HealthzOptions = monitor.HealthzOptions
)

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
