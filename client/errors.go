package client

import "errors"

// ErrUnknownContentType is returned when a received message's Content-Type
// header names an encoding no codec here reads.
var ErrUnknownContentType = errors.New("client: unknown content type")

// ErrBadConfig is returned by NewWorker, NewProducer and the Ensure
// functions when a required field is missing or a value cannot work; the
// error text names the field.
var ErrBadConfig = errors.New("client: bad config")

// ErrStarted is returned by Worker.Start when the worker is already
// running or has been shut down (a worker runs once).
var ErrStarted = errors.New("client: worker already started")

// ErrNotStarted is returned by Worker.Shutdown before Start.
var ErrNotStarted = errors.New("client: worker not started")
