package server

import (
	"math"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"time"

	"github.com/bus-dev/bus/server/jetstream"
)

// Varz is the /varz document, with the reference's field names and
// shapes. Timeouts are in seconds, durations in nanoseconds.
type Varz struct {
	Identity
	AuthRequired     bool              `json:"auth_required,omitempty"`
	TLSRequired      bool              `json:"tls_required,omitempty"`
	TLSVerify        bool              `json:"tls_verify,omitempty"`
	ConnectURLs      []string          `json:"connect_urls,omitempty"` // none without a cluster
	MaxConnections   int               `json:"max_connections"`
	MaxSubscriptions int               `json:"max_subscriptions,omitempty"`
	PingInterval     time.Duration     `json:"ping_interval"`
	MaxPingsOut      int               `json:"ping_max"`
	HTTPHost         string            `json:"http_host"`
	HTTPPort         int               `json:"http_port"`
	HTTPBasePath     string            `json:"http_base_path"`
	HTTPSPort        int               `json:"https_port"`
	AuthTimeout      float64           `json:"auth_timeout"`
	MaxControlLine   int               `json:"max_control_line"`
	MaxPayload       int               `json:"max_payload"`
	MaxPending       int64             `json:"max_pending"`
	Cluster          struct{}          `json:"cluster"`
	Gateway          struct{}          `json:"gateway"`
	LeafNode         struct{}          `json:"leaf"`
	MQTT             struct{}          `json:"mqtt"`
	Websocket        struct{}          `json:"websocket"`
	JetStream        jetstream.Varz    `json:"jetstream"`
	TLSTimeout       float64           `json:"tls_timeout"`
	WriteDeadline    time.Duration     `json:"write_deadline"`
	Start            time.Time         `json:"start"`
	Now              time.Time         `json:"now"`
	Uptime           string            `json:"uptime"`
	Mem              int64             `json:"mem"`
	Cores            int               `json:"cores"`
	MaxProcs         int               `json:"gomaxprocs"`
	CPU              float64           `json:"cpu"`
	Connections      int               `json:"connections"`
	TotalConnections int64             `json:"total_connections"`
	Routes           int               `json:"routes"`
	Remotes          int               `json:"remotes"`
	Leafs            int               `json:"leafnodes"`
	InMsgs           int64             `json:"in_msgs"`
	InBytes          int64             `json:"in_bytes"`
	InClientMsgs     int64             `json:"in_client_msgs"`
	InClientBytes    int64             `json:"in_client_bytes"`
	OutMsgs          int64             `json:"out_msgs"`
	OutBytes         int64             `json:"out_bytes"`
	OutClientMsgs    int64             `json:"out_client_msgs"`
	OutClientBytes   int64             `json:"out_client_bytes"`
	SlowConsumers    int64             `json:"slow_consumers"`
	StaleConnections int64             `json:"stale_connections"`
	StalledClients   int64             `json:"stalled_clients"`
	Subscriptions    int               `json:"subscriptions"`
	HTTPReqStats     map[string]uint64 `json:"http_req_stats"`
	ConfigLoadTime   time.Time         `json:"config_load_time"`
	ConfigDigest     string            `json:"config_digest"`
	Tags             []string          `json:"tags,omitempty"`
	// SystemAccount is empty (left out) without a system account.
	SystemAccount        string     `json:"system_account,omitempty"`
	SlowConsumerStats    *kindStats `json:"slow_consumer_stats"`
	StaleConnectionStats *kindStats `json:"stale_connection_stats,omitempty"`
}

// kindStats splits a count by connection kind; bus has clients only.
type kindStats struct {
	Clients  uint64 `json:"clients"`
	Routes   uint64 `json:"routes"`
	Gateways uint64 `json:"gateways"`
	Leafs    uint64 `json:"leafs"`
}

// Varz snapshots the server's identity, limits and traffic counters.
func (s *Server) Varz() Varz {
	t := s.traffic()
	s.mu.Lock()
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
	slow, stale := uint64(s.slowConsumers.Load()), uint64(s.mon.stale.Load())
	o := s.liveOpts()
	v := Varz{
		Identity:             s.identity(),
		AuthRequired:         s.auth().required && s.auth().noAuth == nil,
		TLSRequired:          s.opts.TLS.enabled(),
		TLSVerify:            s.opts.TLS.verifying(),
		MaxConnections:       o.MaxConnections,
		MaxSubscriptions:     o.MaxSubscriptions,
		PingInterval:         o.PingInterval,
		MaxPingsOut:          o.MaxPingsOut,
		HTTPHost:             s.opts.Host,
		HTTPPort:             httpPort,
		HTTPSPort:            httpsPort,
		AuthTimeout:          o.Authorization.Timeout.Seconds(),
		MaxControlLine:       o.MaxControlLine,
		MaxPayload:           o.MaxPayload,
		MaxPending:           o.MaxPending,
		TLSTimeout:           o.TLS.Timeout.Seconds(),
		WriteDeadline:        o.WriteDeadline,
		Start:                s.started.UTC(),
		Now:                  now.UTC(),
		Uptime:               uptime(now.Sub(s.started)),
		Mem:                  int64(mem.Sys),
		Cores:                runtime.NumCPU(),
		MaxProcs:             runtime.GOMAXPROCS(0),
		CPU:                  s.mon.cpuPercent(now),
		Connections:          t.conns,
		TotalConnections:     s.totalConns.Load(),
		InMsgs:               t.inMsgs,
		InBytes:              t.inBytes,
		OutMsgs:              t.outMsgs,
		OutBytes:             t.outBytes,
		SlowConsumers:        int64(slow),
		StaleConnections:     int64(stale),
		Subscriptions:        s.clientSubs(),
		Leafs:                s.leafCount(),
		HTTPReqStats:         s.mon.requests(),
		ConfigLoadTime:       s.mon.loaded.UTC(),
		SlowConsumerStats:    &kindStats{Clients: slow},
		StaleConnectionStats: &kindStats{Clients: stale},
	}
	if len(s.opts.SystemAccount.Users) > 0 {
		v.SystemAccount = s.opts.SystemAccount.name()
	}
	if s.js != nil {
		v.JetStream = s.js.Varz(s.id)
		v.JetStream.Config.MaxMemory, v.JetStream.Config.MaxStorage = s.jetStreamLimits()
	}
	// Every connection is a client's.
	v.InClientMsgs, v.InClientBytes, v.OutClientMsgs, v.OutClientBytes = v.InMsgs, v.InBytes, v.OutMsgs, v.OutBytes
	return v
}

// traffic is the open connections and the messages and bytes in and out
// of every connection since start.
type traffic struct {
	conns                              int
	inMsgs, inBytes, outMsgs, outBytes int64
}

func (s *Server) traffic() traffic {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	t := traffic{
		conns:  len(conns),
		inMsgs: s.closedInMsgs.Load(), inBytes: s.closedInBytes.Load(),
		outMsgs: s.closedOutMsgs.Load(), outBytes: s.closedOutBytes.Load(),
	}
	for _, c := range conns {
		outMsgs, outBytes := c.out.counts()
		t.inMsgs += c.inMsgs.Load()
		t.inBytes += c.inBytes.Load()
		t.outMsgs += outMsgs
		t.outBytes += outBytes
	}
	return t
}

func (s *Server) serveVarz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, s.Varz())
}

// jetStreamLimits are what bus reports as JetStream's max_memory and
// max_storage: it has no limits of its own, so it reports the reference's
// defaults, three quarters of the RAM and of the store's free disk.
func (s *Server) jetStreamLimits() (memory, storage int64) {
	dir := filepath.Join(s.opts.StoreDir, "jetstream")
	return systemMemory() / 4 * 3, diskAvailable(dir) / 4 * 3
}

// cpuSampler turns the process's CPU time into a percentage of one core
// over the time since the previous sample.
type cpuSampler struct {
	at  time.Time     // of the previous sample; zero before the first
	cpu time.Duration // process CPU time then
}

// cpuPercent samples the process's CPU use since the previous call (the
// first call measures from when the configuration was loaded).
func (m *monitor) cpuPercent(now time.Time) float64 {
	used := processCPU()
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.cpu
	if prev.at.IsZero() {
		prev.at = m.loaded
	}
	m.cpu = cpuSampler{at: now, cpu: used}
	wall := now.Sub(prev.at)
	if wall <= 0 {
		return 0
	}
	pct := 100 * float64(used-prev.cpu) / float64(wall)
	return math.Round(pct*10) / 10
}
