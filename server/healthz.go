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
// of any account that could not be opened (every other stream is being
// served). It returns the HTTP status to answer with.
func (s *Server) Healthz(o HealthzOptions) (HealthStatus, int) {
	h := HealthStatus{Status: "ok"}
	if o.JSServerOnly || o.JSEnabledOnly || s.js == nil {
		// JetStream is on whenever it is configured: Start fails
		// otherwise.
		return h, http.StatusOK
	}
	for _, a := range s.accountJetStreams() {
		var problems []HealthError
		for _, d := range a.js.Damaged() {
			text := fmt.Sprintf("JetStream stream '%s > %s' could not be recovered", a.name, d.Name)
			problems = append(problems, HealthError{Type: "STREAM", Account: a.name, Stream: d.Name, Error: text})
		}
		// bus's own: a stream served but no longer accepting writes.
		for _, d := range a.js.Fenced() {
			text := fmt.Sprintf("JetStream stream '%s > %s' is not accepting writes: %s", a.name, d.Name, d.Error)
			problems = append(problems, HealthError{Type: "STREAM", Account: a.name, Stream: d.Name, Error: text})
		}
		if len(problems) > 0 && !o.Details {
			return HealthStatus{Status: "unavailable", Error: problems[0].Error}, http.StatusServiceUnavailable
		}
		h.Errors = append(h.Errors, problems...)
	}
	if len(h.Errors) > 0 {
		h.Status = "error"
		return h, http.StatusServiceUnavailable
	}
	return h, http.StatusOK
}
