package main

import "errors"

// Exit codes of the bus binary.
const (
	exitOK      = 0
	exitFailure = 1 // the server failed to start or to stop
	exitUsage   = 2 // bad flags, arguments or configuration
	// exitDamaged: a backup or store is damaged, incomplete or out of
	// order (bus backup, bus restore, bus store verify).
	exitDamaged = 3
	// exitExists: a restore's stream exists already; it is left as it was.
	exitExists = 4
)

// exitError is an error from a command that decides the exit code. Errors
// without one come from cobra's parsing and mean exitUsage.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode returns the process exit code for err from a command.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitUsage
}
