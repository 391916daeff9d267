package server

import (
	"math"
	"net"
	"path/filepath"
	"runtime"
	"time"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/server/monitor"
)

// Varz is the /varz document (see monitor.Varz).
type Varz = monitor.Varz

// Varz snapshots the server's identity, limits and traffic counters.
func (s *Server) Varz() Varz {
	t := s.traffic()
	httpPort, httpsPort := 0, 0
	if a, ok := s.HTTPAddr().(*net.TCPAddr); ok {
		httpPort = a.Port
	}
	if a, ok := s.HTTPSAddr().(*net.TCPAddr); ok {
		httpsPort = a.Port
	}
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
		Uptime:               monitor.Uptime(now.Sub(s.started)),
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
		Subscriptions:        s.allClientSubs(),
		Leafs:                s.leafCount(),
		HTTPReqStats:         s.httpRequests(),
		ConfigLoadTime:       s.mon.loaded.UTC(),
		SlowConsumerStats:    &monitor.KindStats{Clients: slow},
		StaleConnectionStats: &monitor.KindStats{Clients: stale},
	}
	if s.opts.hasSystemUsers() {
		v.SystemAccount = s.opts.SystemAccount.name()
	}
	v.JetStream = s.jetStreamVarz()
	v.Websocket = s.wsVarz()
	v.MQTT = s.mqttVarz()
	// Every connection is a client's.
	v.InClientMsgs, v.InClientBytes, v.OutClientMsgs, v.OutClientBytes = v.InMsgs, v.InBytes, v.OutMsgs, v.OutBytes
	return v
}

// traffic is the open connections and the messages and bytes in and out
// of every connection since start.
type traffic struct {
	// wsConns and mqttConns are those of WebSocket and MQTT clients,
	// counted in conns too (an MQTT client over WebSocket in both).
	conns, wsConns, mqttConns          int
	inMsgs, inBytes, outMsgs, outBytes int64
}

func (s *Server) traffic() traffic {
	conns := s.connList()
	t := traffic{
		conns:  len(conns),
		inMsgs: s.closedInMsgs.Load(), inBytes: s.closedInBytes.Load(),
		outMsgs: s.closedOutMsgs.Load(), outBytes: s.closedOutBytes.Load(),
	}
	for _, c := range conns {
		if c.ws {
			t.wsConns++
		}
		if c.mqtt != nil {
			t.mqttConns++
		}
		outMsgs, outBytes := c.out.counts()
		t.inMsgs += c.inMsgs.Load()
		t.inBytes += c.inBytes.Load()
		t.outMsgs += outMsgs
		t.outBytes += outBytes
	}
	return t
}

// jetStreamVarz is /varz's JetStream section; its zero value (JetStream
// off) is written {}, as the reference writes it.
func (s *Server) jetStreamVarz() jetstream.Varz {
	if s.js == nil {
		return jetstream.Varz{}
	}
	v := jetstream.VarzOf(s.id, s.jetStreams()...) // every account's usage
	s.fillJetStreamConfig(v.Config)
	return v
}

// fillJetStreamConfig completes JetStream's configuration as /varz and
// /jsz report it with what the server holds: the limits and the domain.
func (s *Server) fillJetStreamConfig(c *jetstream.JSConfig) {
	c.MaxMemory, c.MaxStorage = s.jetStreamLimits()
	c.Domain = s.opts.JetStreamDomain
}

// jetStreamLimits are what bus reports as JetStream's max_memory and
// max_storage: the configured max_memory_store and max_file_store, and
// where one is not set, what the reference takes by default: three
// quarters of the RAM and of the store's free disk.
func (s *Server) jetStreamLimits() (memory, storage int64) {
	memory, storage = s.opts.JetStreamMaxMemory, s.opts.JetStreamMaxStore
	if memory == 0 {
		memory = systemMemory() / 4 * 3
	}
	if storage == 0 {
		storage = diskAvailable(filepath.Join(s.opts.StoreDir, "jetstream")) / 4 * 3
	}
	return memory, storage
}

// cpuSampler turns the process's CPU time into a percentage of one core
// over the time since the previous sample.
type cpuSampler struct {
	at  time.Time     // of the previous sample; zero before the first
	cpu time.Duration // process CPU time then
}

// cpuPercent samples the process's CPU use since the previous call (the
// first call measures from when the configuration was loaded).
func (m *monitorState) cpuPercent(now time.Time) float64 {
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
