package server

import (
	"context"
	"errors"
	"net"
)

// Version is the server version reported in INFO and /varz. Clients gate
// features on it, so it reads as a NATS 2.x version.
const Version = "2.11.0"

// Server is a NATS-protocol message server. Create it with New, run it with
// Start and stop it with Shutdown.
type Server struct {
	opts Options
}

// New validates opts and returns a server that is not yet listening.
func New(opts Options) (*Server, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Server{opts: opts}, nil
}

// Start opens the listeners and begins accepting clients.
func (s *Server) Start() error { return errors.New("server: not implemented yet") }

// Addr is the client listener's address once Start has returned.
func (s *Server) Addr() net.Addr { return nil }

// HTTPAddr is the monitoring listener's address, or nil when disabled.
func (s *Server) HTTPAddr() net.Addr { return nil }

// Shutdown stops accepting, flushes and closes every connection, and
// returns when all goroutines are gone or ctx is done.
func (s *Server) Shutdown(ctx context.Context) error { return nil }
