// Package ntf stands in for orbit.go's NATS testing framework service in
// nats.go's own test binaries, so that they run against bus.
//
// nats.go's TestMain starts the service and its tests first connect to it
// to check it is up; every server a test asks for comes from the client
// half (the ntf-client shim, which starts bus processes). So the service
// here is one bus server in this process, on a free loopback port: the
// tests' first connection reaches bus, and nothing else of the service is
// needed.
package ntf

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/bus-dev/bus/server"
)

// Options are the service's settings that nats.go's TestMain passes.
type Options struct {
	// AdvertiseHost is the host tests dial; only loopback names are
	// served, since every bus this shim starts listens on this machine.
	AdvertiseHost string
}

// Service is the running stand-in. Close stops it.
type Service struct {
	srv  *server.Server
	port int
}

// New starts a bus server on a free loopback port.
func New(ctx context.Context, opts Options) (*Service, error) {
	switch opts.AdvertiseHost {
	case "", "localhost", "127.0.0.1":
	default:
		return nil, fmt.Errorf("ntf shim: advertise host %q: bus's test servers run on this machine; only localhost is served", opts.AdvertiseHost)
	}
	srv, err := server.New(server.Options{Host: "127.0.0.1", Port: 0})
	if err != nil {
		return nil, fmt.Errorf("ntf shim: configure bus: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("ntf shim: start bus: %w", err)
	}
	addr, ok := srv.Addr().(*net.TCPAddr)
	if !ok {
		_ = srv.Shutdown(ctx)
		return nil, fmt.Errorf("ntf shim: bus listens on %v, not TCP", srv.Addr())
	}
	return &Service{srv: srv, port: addr.Port}, nil
}

// Port is the client port of the service's bus.
func (s *Service) Port() int { return s.port }

// ClientURL is the URL of the service's bus.
func (s *Service) ClientURL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// Close stops the service's bus within ten seconds.
func (s *Service) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
