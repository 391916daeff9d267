package server

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bus-dev/bus/server/jetstream"
)

// startMonitoring serves /healthz, /varz and /jsz on HTTPPort, and over
// TLS on HTTPSPort (-1: any free port). Called by Start with s.mu held.
func (s *Server) startMonitoring() error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.serveHealthz)
	mux.HandleFunc("GET /varz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, s.Varz())
	})
	mux.HandleFunc("GET /jsz", func(w http.ResponseWriter, _ *http.Request) {
		j, ok := s.Jsz()
		if !ok {
			http.Error(w, `{"error":"jetstream not enabled"}`, http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, j)
	})
	listen := func(port int) (net.Listener, error) {
		addr := net.JoinHostPort(s.opts.Host, strconv.Itoa(max(port, 0)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("server: monitoring listen on %s: %w", addr, err)
		}
		return ln, nil
	}
	s.httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
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

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing to do
}

// Varz is the /varz document, with the reference server's field names.
type Varz struct {
	Identity
	HTTPPort         int             `json:"http_port"`
	MaxConnections   int             `json:"max_connections"`
	MaxSubscriptions int             `json:"max_subscriptions"`
	PingInterval     time.Duration   `json:"ping_interval"`
	MaxPingsOut      int             `json:"ping_max"`
	MaxControlLine   int             `json:"max_control_line"`
	MaxPayload       int             `json:"max_payload"`
	MaxPending       int64           `json:"max_pending"`
	WriteDeadline    time.Duration   `json:"write_deadline"`
	Start            time.Time       `json:"start"`
	Now              time.Time       `json:"now"`
	Uptime           string          `json:"uptime"`
	Mem              int64           `json:"mem"`
	Cores            int             `json:"cores"`
	Connections      int             `json:"connections"`
	TotalConnections int64           `json:"total_connections"`
	InMsgs           int64           `json:"in_msgs"`
	OutMsgs          int64           `json:"out_msgs"`
	InBytes          int64           `json:"in_bytes"`
	OutBytes         int64           `json:"out_bytes"`
	SlowConsumers    int64           `json:"slow_consumers"`
	Subscriptions    int             `json:"subscriptions"`
	JetStream        *jetstream.Varz `json:"jetstream,omitempty"`
	// Security settings, as the reference reports them (timeouts in
	// seconds).
	AuthRequired bool    `json:"auth_required,omitempty"`
	TLSRequired  bool    `json:"tls_required,omitempty"`
	TLSVerify    bool    `json:"tls_verify,omitempty"`
	AuthTimeout  float64 `json:"auth_timeout"`
	TLSTimeout   float64 `json:"tls_timeout"`
	HTTPSPort    int     `json:"https_port"`
}

// Varz snapshots the server's identity, limits and traffic counters.
func (s *Server) Varz() Varz {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	httpPort, httpsPort := 0, 0
	if s.httpLn != nil {
		httpPort = s.httpLn.Addr().(*net.TCPAddr).Port
	}
	if s.httpsLn != nil {
		httpsPort = s.httpsLn.Addr().(*net.TCPAddr).Port
	}
	s.mu.Unlock()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	now := time.Now()
	v := Varz{
		Identity:         s.identity(),
		HTTPPort:         httpPort,
		MaxConnections:   s.opts.MaxConnections,
		MaxSubscriptions: s.opts.MaxSubscriptions,
		PingInterval:     s.opts.PingInterval,
		MaxPingsOut:      s.opts.MaxPingsOut,
		MaxControlLine:   s.opts.MaxControlLine,
		MaxPayload:       s.opts.MaxPayload,
		MaxPending:       s.opts.MaxPending,
		WriteDeadline:    s.opts.WriteDeadline,
		Start:            s.started.UTC(),
		Now:              now.UTC(),
		Uptime:           uptime(now.Sub(s.started)),
		Mem:              int64(mem.Sys),
		Cores:            runtime.NumCPU(),
		Connections:      len(conns),
		TotalConnections: s.totalConns.Load(),
		InMsgs:           s.closedInMsgs.Load(),
		InBytes:          s.closedInBytes.Load(),
		OutMsgs:          s.closedOutMsgs.Load(),
		OutBytes:         s.closedOutBytes.Load(),
		SlowConsumers:    s.slowConsumers.Load(),
		Subscriptions:    s.clientSubs(),
		JetStream:        s.varzJetStream(),
		AuthRequired:     s.auth.required && s.auth.noAuth == nil,
		TLSRequired:      s.opts.TLS.enabled(),
		TLSVerify:        s.opts.TLS.verifying(),
		AuthTimeout:      s.opts.Authorization.Timeout.Seconds(),
		TLSTimeout:       s.opts.TLS.Timeout.Seconds(),
		HTTPSPort:        httpsPort,
	}
	for _, c := range conns {
		outMsgs, outBytes := c.out.counts()
		v.InMsgs += c.inMsgs.Load()
		v.InBytes += c.inBytes.Load()
		v.OutMsgs += outMsgs
		v.OutBytes += outBytes
	}
	return v
}

// uptime formats like the reference: "1d2h3m4s", largest unit first.
func uptime(d time.Duration) string {
	secs := int64(d.Seconds())
	days, secs := secs/86400, secs%86400
	hours, secs := secs/3600, secs%3600
	mins, secs := secs/60, secs%60
	out := ""
	if days > 0 {
		out += strconv.FormatInt(days, 10) + "d"
	}
	if days > 0 || hours > 0 {
		out += strconv.FormatInt(hours, 10) + "h"
	}
	if days > 0 || hours > 0 || mins > 0 {
		out += strconv.FormatInt(mins, 10) + "m"
	}
	return out + strconv.FormatInt(secs, 10) + "s"
}

// serveHealthz answers ok, or, as the reference does for a stream that
// cannot serve, 503 "unavailable" naming the streams that could not be
// opened (every other stream is being served).
func (s *Server) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	var damaged []string
	if s.js != nil {
		for _, d := range s.js.Damaged() {
			damaged = append(damaged, d.Name)
		}
	}
	if len(damaged) == 0 {
		writeJSON(w, map[string]string{"status": "ok"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status":      "unavailable",
		"status_code": http.StatusServiceUnavailable,
		"error":       "JetStream streams damaged: " + strings.Join(damaged, ", "),
	})
}
