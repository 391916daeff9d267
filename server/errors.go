package server

import (
	"errors"

	"github.com/bus-dev/bus/jetlog"
)

// protoError is a client protocol violation. text is what goes after -ERR in
// single quotes, exactly as the reference server words it (nats.go matches
// on these texts); an empty text closes the connection without any -ERR.
// fatal errors close the connection after the -ERR is flushed.
type protoError struct {
	text  string
	fatal bool
}

func (e *protoError) Error() string {
	if e.text == "" {
		return "server: malformed protocol"
	}
	return "server: " + e.text
}

// The reference server's -ERR catalogue (PROTOCOL.md §6).
var (
	errUnknownOp          = &protoError{text: "Unknown Protocol Operation", fatal: true}
	errMaxPayload         = &protoError{text: "Maximum Payload Violation", fatal: true}
	errMaxControlLine     = &protoError{text: "maximum control line exceeded", fatal: true}
	errMaxConnections     = &protoError{text: "maximum connections exceeded", fatal: true}
	errAccountConnections = &protoError{text: "maximum account active connections exceeded", fatal: true}
	errStaleConnection    = &protoError{text: "Stale Connection", fatal: true}
	errBadClientProtocol  = &protoError{text: "invalid client protocol", fatal: true}
	errNoRespNeedsHeaders = &protoError{text: "no responders requires headers support", fatal: true}
	errInvalidSubject     = &protoError{text: "Invalid Subject"}
	errInvalidPubSubject  = &protoError{text: "Invalid Publish Subject"}
	errMaxSubscriptions   = &protoError{text: "maximum subscriptions exceeded"}
	errAuthViolation      = &protoError{text: "Authorization Violation", fatal: true}
	errAuthTimeout        = &protoError{text: "Authentication Timeout", fatal: true}

	// errMalformed covers bad arguments (wrong count, bad sizes, bad JSON,
	// HPUB without headers): the reference closes without a word.
	errMalformed = &protoError{fatal: true}
)

// ErrServerClosed is returned by Start after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// ErrStoreLocked is wrapped by Start's error when another process holds
// the JetStream store directory's lock (jetlog.ErrLocked), so a command
// can say so without importing the store.
var ErrStoreLocked = jetlog.ErrLocked
