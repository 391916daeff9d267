package server

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The monitoring endpoints, with nats-server's paths. Every handler is in
// the file named for its concept (varz.go, connz.go, subsz.go, jsz.go,
// accountz.go, healthz.go); docs/monitoring.md lists what each serves and
// where it differs from the reference. "/" is the dashboard (dashboard.go).
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

// monitor is what the monitoring endpoints keep themselves: closed
// connections, request counts, the CPU sample. Safe for concurrent use.
type monitor struct {
	closed *closedRing
	stale  atomic.Int64 // connections closed as stale
	loaded time.Time    // when the configuration was taken (New)
	lag    *lagRing     // the dashboard's history (dashboardlag.go)

	mu   sync.Mutex        // guards the fields below
	reqs map[string]uint64 // requests per path, as /varz http_req_stats
	cpu  cpuSampler
}

func newMonitor() *monitor {
	return &monitor{
		closed: newClosedRing(DefaultMaxClosedClients),
		loaded: time.Now(),
		lag:    newLagRing(lagSamples, lagMaxConsumers),
		reqs:   make(map[string]uint64),
	}
}

func (m *monitor) count(path string) {
	m.mu.Lock()
	m.reqs[path]++
	m.mu.Unlock()
}

func (m *monitor) requests() map[string]uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]uint64, len(m.reqs))
	for k, v := range m.reqs {
		out[k] = v
	}
	return out
}

// routes registers every monitoring endpoint on mux; each request is
// counted under its path (the alias under /subsz, as the reference does).
func (s *Server) routes(mux *http.ServeMux) {
	handle := func(path, counted string, h http.HandlerFunc) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			s.mon.count(counted)
			h(w, r)
		})
	}
	handle(varzPath, varzPath, s.serveVarz)
	handle(connzPath, connzPath, s.serveConnz)
	handle(subszPath, subszPath, s.serveSubsz)
	handle(subsAlias, subszPath, s.serveSubsz)
	handle(routezPath, routezPath, s.serveRoutez)
	handle(gatewayzPath, gatewayzPath, s.serveGatewayz)
	handle(leafzPath, leafzPath, s.serveLeafz)
	handle(accountzPath, accountzPath, s.serveAccountz)
	handle(accstatzPath, accstatzPath, s.serveAccstatz)
	handle(jszPath, jszPath, s.serveJsz)
	handle(healthzPath, healthzPath, s.serveHealthz)
	mux.Handle("GET /metrics", s.metricsHandler())
	s.dashboardRoutes(mux) // GET / and the dashboard's JSON and actions (dashboard.go)
}

// startMonitoring serves the endpoints on HTTPPort, and over TLS on
// HTTPSPort (-1: any free port). Called by Start with s.mu held.
func (s *Server) startMonitoring() error {
	mux := http.NewServeMux()
	s.routes(mux)
	listen := func(port int) (net.Listener, error) {
		addr := net.JoinHostPort(s.opts.Host, strconv.Itoa(max(port, 0)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("server: monitoring listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	s.httpSrv = &http.Server{Handler: s.httpAuthGuard(mux), ReadHeaderTimeout: 5 * time.Second}
	if s.opts.HTTPPort != 0 {
		ln, err := listen(s.opts.HTTPPort)
		if err != nil {
			return err
		}
		s.httpLn = ln
		s.serveMonitoring(ln)
		s.log.Info("monitoring listening", "addr", ln.Addr().String())
	}
	if s.opts.HTTPSPort != 0 {
		ln, err := listen(s.opts.HTTPSPort)
		if err != nil {
			if s.httpLn != nil {
				_ = s.httpSrv.Close()
			}
			return err
		}
		s.httpsLn = tls.NewListener(ln, s.monitorTLS())
		s.serveMonitoring(s.httpsLn)
		s.log.Info("monitoring listening over https", "addr", ln.Addr().String())
	}
	s.startLagSampler()
	return nil
}

func (s *Server) serveMonitoring(ln net.Listener) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.httpSrv.Serve(ln); err != nil && err != http.ErrServerClosed {
			s.log.Error("monitoring stopped", "err", err)
		}
	}()
}

// writeJSON answers with v, indented, as the reference does; browsers on
// other origins may read it (the reference allows any origin too).
func writeJSON(w http.ResponseWriter, v any) {
	writeJSONStatus(w, http.StatusOK, v)
}

func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing to do
}

// badRequest answers 400 with a plain-text reason, as the reference does
// for a query it cannot use.
func badRequest(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(err.Error()))
}

// query reads typed query parameters; the first bad one is kept in err
// and every later read is a no-op, so a handler checks once.
type query struct {
	r   *http.Request
	err error
}

func (q *query) str(name string) string { return q.r.URL.Query().Get(name) }

// bool is true for 1, t, true and the like; "" is false.
func (q *query) bool(name string) bool {
	v := q.str(name)
	if v == "" || q.err != nil {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		q.err = fmt.Errorf("monitoring: %s=%q is not a boolean", name, v)
	}
	return b
}

func (q *query) int(name string) int {
	v := q.str(name)
	if v == "" || q.err != nil {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		q.err = fmt.Errorf("monitoring: %s=%q is not an integer", name, v)
	}
	return n
}

func (q *query) uint64(name string) uint64 {
	v := q.str(name)
	if v == "" || q.err != nil {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		q.err = fmt.Errorf("monitoring: %s=%q is not an unsigned integer", name, v)
	}
	return n
}

// subs reads subs=true|detail.
func (q *query) subs() (list, detail bool) {
	if strings.EqualFold(q.str("subs"), "detail") {
		return false, true
	}
	return q.bool("subs"), false
}

// page is offset and limit applied to n items: the half-open range
// [lo, hi) of what to return. A negative offset counts as 0.
func page(n, offset, limit int) (lo, hi int) {
	lo = min(max(offset, 0), n)
	return lo, lo + min(limit, n-lo)
}

// uptime formats like the reference: "1y2d3h4m5s", largest unit first,
// leading zero units left out.
func uptime(d time.Duration) string {
	secs := int64(d / time.Second)
	mins, hours := secs/60, secs/3600
	days := hours / 24
	years := days / 365
	switch {
	case years > 0:
		return fmt.Sprintf("%dy%dd%dh%dm%ds", years, days%365, hours%24, mins%60, secs%60)
	case days > 0:
		return fmt.Sprintf("%dd%dh%dm%ds", days, hours%24, mins%60, secs%60)
	case hours > 0:
		return fmt.Sprintf("%dh%dm%ds", hours, mins%60, secs%60)
	case mins > 0:
		return fmt.Sprintf("%dm%ds", mins, secs%60)
	}
	return fmt.Sprintf("%ds", secs)
}
