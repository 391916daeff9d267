package monitor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The monitoring endpoints, with nats-server's paths. The handlers are in
// endpoints.go; docs/monitoring.md lists what each serves and where it
// differs from the reference. "/" is the dashboard (dashboard.go).
const (
	varzPath     = "/varz"
	connzPath    = "/connz"
	subszPath    = "/subsz"
	subsAlias    = "/subscriptionsz"
	routezPath   = "/routez"
	gatewayzPath = "/gatewayz"
	leafzPath    = "/leafz"
	accountzPath = "/accountz"
	accstatzPath = "/accstatz"
	jszPath      = "/jsz"
	healthzPath  = "/healthz"
)

// Options configure a monitoring server. Source is required.
type Options struct {
	Source Source
	Host   string
	// HTTPPort and HTTPSPort are the ports to serve on: 0 for none, -1
	// for any free port. HTTPS needs TLS.
	HTTPPort, HTTPSPort int
	TLS                 *tls.Config
	// HTTPAuth puts every path but /healthz behind the HTTP Basic
	// login (dashboardauth.go).
	HTTPAuth bool
	Logger   *slog.Logger // nil: discard
}

// Server is the monitoring front end: the endpoints, /metrics and the
// dashboard with its history. Create it with New, run it with Start and
// stop it with Shutdown. Safe for concurrent use.
type Server struct {
	src  Source
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	lag  *lagRing // the dashboard's history (dashboardlag.go)

	reqMu sync.Mutex        // guards reqs
	reqs  map[string]uint64 // requests per path, as /varz http_req_stats

	mu      sync.Mutex // guards the fields below
	httpSrv *http.Server
	httpLn  net.Listener
	httpsLn net.Listener
	started bool

	wg sync.WaitGroup // the serve loops and the lag sampler
}

// New checks opts and returns a server that is not yet listening; it
// starts nothing.
func New(opts Options) (*Server, error) {
	if opts.Source == nil {
		return nil, errors.New("monitor: no Source")
	}
	if opts.HTTPSPort != 0 && opts.TLS == nil {
		return nil, errors.New("monitor: an HTTPS port needs a TLS configuration")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Server{
		src:  opts.Source,
		opts: opts,
		log:  opts.Logger,
		mux:  http.NewServeMux(),
		lag:  newLagRing(lagSamples, lagMaxConsumers),
		reqs: make(map[string]uint64),
	}
	m.routes(m.mux)
	return m, nil
}

// Handler is every endpoint behind the HTTP login guard, as Start serves
// it (tests call it without a listener).
func (m *Server) Handler() http.Handler { return m.httpAuthGuard(m.mux) }

func (m *Server) count(path string) {
	m.reqMu.Lock()
	m.reqs[path]++
	m.reqMu.Unlock()
}

// Requests counts the requests served per path (the alias under /subsz),
// for /varz's http_req_stats. The map is the caller's.
func (m *Server) Requests() map[string]uint64 {
	m.reqMu.Lock()
	defer m.reqMu.Unlock()
	out := make(map[string]uint64, len(m.reqs))
	for k, v := range m.reqs {
		out[k] = v
	}
	return out
}

// routes registers every monitoring endpoint on mux; each request is
// counted under its path (the alias under /subsz, as the reference does).
func (m *Server) routes(mux *http.ServeMux) {
	handle := func(path, counted string, h http.HandlerFunc) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			m.count(counted)
			h(w, r)
		})
	}
	handle(varzPath, varzPath, m.serveVarz)
	handle(connzPath, connzPath, m.serveConnz)
	handle(subszPath, subszPath, m.serveSubsz)
	handle(subsAlias, subszPath, m.serveSubsz)
	handle(routezPath, routezPath, m.serveRoutez)
	handle(gatewayzPath, gatewayzPath, m.serveGatewayz)
	handle(leafzPath, leafzPath, m.serveLeafz)
	handle(accountzPath, accountzPath, m.serveAccountz)
	handle(accstatzPath, accstatzPath, m.serveAccstatz)
	handle(jszPath, jszPath, m.serveJsz)
	handle(healthzPath, healthzPath, m.serveHealthz)
	mux.Handle("GET /metrics", m.metricsHandler())
	m.dashboardRoutes(mux) // GET / and the dashboard's JSON and actions (dashboard.go)
}

// Start serves the endpoints on HTTPPort, and over TLS on HTTPSPort, and
// starts the dashboard's history sampler. It returns once both listen.
func (m *Server) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return errors.New("monitor: already started")
	}
	listen := func(port int) (net.Listener, error) {
		addr := net.JoinHostPort(m.opts.Host, strconv.Itoa(max(port, 0)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("server: monitoring listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	var plain, secure net.Listener
	if m.opts.HTTPPort != 0 {
		ln, err := listen(m.opts.HTTPPort)
		if err != nil {
			return err
		}
		plain = ln
	}
	if m.opts.HTTPSPort != 0 {
		ln, err := listen(m.opts.HTTPSPort)
		if err != nil {
			if plain != nil {
				_ = plain.Close()
			}
			return err
		}
		secure = tls.NewListener(ln, m.opts.TLS)
	}
	m.started = true
	m.httpSrv = &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 5 * time.Second}
	m.httpLn, m.httpsLn = plain, secure
	if plain != nil {
		m.serve(plain)
		m.log.Info("monitoring listening", "addr", plain.Addr().String())
	}
	if secure != nil {
		m.serve(secure)
		m.log.Info("monitoring listening over https", "addr", secure.Addr().String())
	}
	m.startLagSampler()
	return nil
}

func (m *Server) serve(ln net.Listener) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.httpSrv.Serve(ln); err != nil && err != http.ErrServerClosed {
			m.log.Error("monitoring stopped", "err", err)
		}
	}()
}

// Shutdown stops listening, lets the requests being served finish until
// ctx ends, stops the sampler and waits for every goroutine the monitor
// started. It returns ctx's error when ctx ended first.
func (m *Server) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	srv := m.httpSrv
	m.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx) // cancels the sampler (RegisterOnShutdown)
	if err != nil {
		_ = srv.Close()
	}
	m.wg.Wait()
	return err
}

// Addr is the HTTP listener's address, or nil when there is none.
func (m *Server) Addr() net.Addr {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.httpLn == nil {
		return nil
	}
	return m.httpLn.Addr()
}

// TLSAddr is the HTTPS listener's address, or nil when there is none.
func (m *Server) TLSAddr() net.Addr {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.httpsLn == nil {
		return nil
	}
	return m.httpsLn.Addr()
}
