package monitor

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
