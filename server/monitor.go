package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/server/monitor"
)

// The monitoring front end (endpoints, /metrics, the dashboard) is
// server/monitor, which reads through monitor.Source, implemented by
// monitorSource (monitorsource.go). What the document builders keep of
// their own is here.

// monitorState is what the document builders (varz.go, connz.go, …)
// keep themselves: closed connections, the stale count, the CPU sample.
// Safe for concurrent use.
type monitorState struct {
	closed *closedRing
	stale  atomic.Int64 // connections closed as stale
	loaded time.Time    // when the configuration was taken (New)

	mu  sync.Mutex // guards cpu
	cpu cpuSampler
}

func newMonitorState() *monitorState {
	return &monitorState{
		closed: newClosedRing(DefaultMaxClosedClients),
		loaded: time.Now(),
	}
}

// startMonitoring serves the endpoints on HTTPPort, and over TLS on
// HTTPSPort (-1: any free port). Called by Start with s.mu held.
func (s *Server) startMonitoring() error {
	o := monitor.Options{
		Source:    monitorSource{s},
		Host:      s.opts.Host,
		HTTPPort:  s.opts.HTTPPort,
		HTTPSPort: s.opts.HTTPSPort,
		HTTPAuth:  s.opts.HTTPAuth,
		Logger:    s.log,
	}
	if s.opts.HTTPSPort != 0 {
		o.TLS = s.monitorTLS()
	}
	m, err := monitor.New(o)
	if err != nil {
		return err
	}
	if err := m.Start(); err != nil {
		return err
	}
	s.http = m
	return nil
}

// httpRequests are the monitoring requests per path, for /varz; empty
// without monitoring.
func (s *Server) httpRequests() map[string]uint64 {
	if m := s.monitoring(); m != nil {
		return m.Requests()
	}
	return map[string]uint64{}
}

// monitoring is the monitoring front end, nil when disabled or before
// Start.
func (s *Server) monitoring() *monitor.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.http
}
