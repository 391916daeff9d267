package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mathrand "math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/server/monitor"
	"github.com/bus-dev/bus/subjects"
)

// Version is the server version reported in INFO and /varz. Clients gate
// features on it, so it reads as a NATS 2.x version.
const Version = "2.11.0"

// Server is a NATS-protocol message server. Create it with New, run it with
// Start and stop it with Shutdown.
type Server struct {
	opts    Options
	id      string
	name    string
	log     *slog.Logger
	started time.Time
	subs    *subjects.Trie[*subscription]
	// sysSubs is the system account's subject space (sysaccount.go):
	// its users' subscriptions and the $SYS.REQ services (sysreq.go).
	sysSubs *subjects.Trie[*subscription]
	// global and sys are the global and the system account (their
	// tries are subs and sysSubs); accounts are the others, by name,
	// which Reload swaps (account.go).
	global, sys *account
	accounts    atomic.Pointer[accountSet]
	chunks      *chunkPool         // outbound buffers, shared by all connections
	js          *jetstream.Service // nil unless Options.JetStream
	// jsPool bounds every account's streams together by the server's
	// JetStreamMaxMemory and JetStreamMaxStore (jetstream.Pool).
	jsPool *jetstream.Pool
	// jsCaches are the file and index caches of every account's
	// JetStream (jetstream.Caches), closed after the last of them stops.
	jsCaches *jetstream.Caches
	// authn is who may connect, and live the settings that may change
	// while running; Reload swaps both (reload.go), readers Load them.
	authn atomic.Pointer[authenticator]
	// wsAuthn is who WebSocket clients may connect as (wsauth.go); nil
	// without a websocket listener.
	wsAuthn atomic.Pointer[authenticator]
	// mqttAuthn is who MQTT clients may connect as (mqttoptions.go); nil
	// without an mqtt listener.
	mqttAuthn atomic.Pointer[authenticator]
	live      atomic.Pointer[Options]
	// tracer is protocol tracing, nil when off (trace.go); Reload swaps it.
	tracer atomic.Pointer[tracer]
	// tlsConf is the client port's TLS configuration, nil without TLS;
	// ReloadTLS swaps it for new connections.
	tlsConf atomic.Pointer[tls.Config]
	// watchers hear of client subscriptions coming and going (push
	// consumers watch their deliver subjects).
	watchers interestWatchers
	// leafInterest is what leaf links tell their hubs; leafLinks keep
	// the remotes connected (leaflink.go). Both nil without remotes.
	leafInterest *leafInterest
	leafLinks    []*leafLink
	port         int           // the client port actually bound, set by Start
	ws           *wsState      // the WebSocket listener (ws.go); nil when off
	mqtt         *mqttState    // the MQTT listener (mqtt.go); nil when off
	mon          *monitorState // the document builders' own state (monitor.go)
	// keys sign auth callout requests and seal them to a callout's
	// xkey (authcallout*.go); keys.id is id. Immutable.
	keys serverKeys

	mu       sync.Mutex // guards the fields below
	ln       net.Listener
	http     *monitor.Server // the monitoring front end; nil when disabled
	conns    map[uint64]*conn
	shutdown bool
	lameDuck bool          // LameDuck began: no new clients (lameduck.go)
	quit     chan struct{} // closed when Shutdown begins

	jsStop   sync.Once  // JetStream is stopped once, by LameDuck or Shutdown
	reloadMu sync.Mutex // one Reload at a time

	nextID        atomic.Uint64
	totalConns    atomic.Int64
	slowConsumers atomic.Int64
	authFailures  atomic.Int64 // connections refused by authentication (connauth.go)
	// unauthenticated counts connections that must still authenticate.
	unauthenticated atomic.Int64
	internalSubs    atomic.Int64 // the server's own subscriptions in subs
	// sysServices are the $SYS.REQ subscriptions (sysreq.go), in subs
	// and sysSubs; sysSeq numbers the answers' envelopes.
	sysServices []*subscription
	sysSeq      atomic.Uint64
	// Traffic of connections that have closed; live ones count their own.
	closedInMsgs, closedInBytes, closedOutMsgs, closedOutBytes atomic.Int64

	// installed are the imports' subscriptions (imports.go), jwts the
	// NATS resolver's store (resolver.go; nil without), activationTimer
	// the next activation token's expiry: all under reloadMu after New.
	installed       []installedImport
	jwts            *jwtStore
	activationTimer *time.Timer

	wg sync.WaitGroup // every goroutine the server started
}

// New validates opts and returns a server that is not yet listening.
func New(opts Options) (*Server, error) {
	opts = opts.clone().WithDefaults() // the caller may reuse its slices
	if err := opts.Operator.checkPreload(); err != nil {
		return nil, err
	}
	jwts, opts, err := openResolver(opts)
	if err != nil {
		return nil, err
	}
	if opts, err = opts.withOperator(); err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	keys, err := newServerKeys()
	if err != nil {
		return nil, err
	}
	id := keys.id
	s := &Server{
		opts:    opts,
		id:      id,
		name:    opts.ServerName,
		log:     opts.Logger,
		subs:    subjects.NewTrie[*subscription](),
		sysSubs: subjects.NewTrie[*subscription](),
		chunks:  newChunkPool(),
		conns:   make(map[uint64]*conn),
		quit:    make(chan struct{}),
		mon:     newMonitorState(),
		jwts:    jwts,
	}
	s.keys = keys
	if s.name == "" {
		s.name = id
	}
	if len(opts.LeafNodes.Remotes) > 0 {
		s.leafInterest = newLeafInterest(id)
		for _, r := range opts.LeafNodes.Remotes {
			s.leafLinks = append(s.leafLinks, newLeafLink(s, r))
		}
	}
	globalMappings, err := newMapper(opts.Mappings)
	if err != nil {
		return nil, err
	}
	s.global = &account{name: globalAccount, trie: s.subs, mapper: newLiveMappings(globalMappings)}
	s.global.limits.Store(&AccountLimits{})
	s.sys = &account{name: opts.SystemAccount.name(), system: true, trie: s.sysSubs, mapper: newLiveMappings(nil), nameTag: opts.trust.nameTag(opts.SystemAccount.name())}
	s.sys.limits.Store(&AccountLimits{})
	set, _, err := s.buildAccounts(opts.Accounts, nil) // nothing to commit: every account is new
	if err != nil {
		return nil, err
	}
	if err := s.installImports(opts.Accounts, set); err != nil {
		return nil, err
	}
	s.accounts.Store(&set)
	au, wsAu := s.newAuthenticators(&opts, set)
	s.authn.Store(au)
	s.wsAuthn.Store(wsAu)
	s.mqttAuthn.Store(s.newMQTTAuthenticator(&opts, set))
	s.live.Store(&opts)
	s.tracer.Store(newTracer(opts))
	if opts.TLS.enabled() {
		cfg, err := loadTLS(opts.TLS)
		if err != nil {
			return nil, err
		}
		s.tlsConf.Store(cfg)
	}
	return s, nil
}

// serverKeys are the server's nkey, whose public key is its id as in
// the reference ('N' and 55 base32 characters), and its curve key, for
// encrypted auth callout requests (authcallout*.go).
type serverKeys struct {
	id, xkeyPublic string
	kp, xkp        nkeys.KeyPair
}

func newServerKeys() (serverKeys, error) {
	kp, err := nkeys.CreateServer()
	if err != nil {
		return serverKeys{}, fmt.Errorf("server: generate id: %w", err)
	}
	xkp, err := nkeys.CreateCurveKeys()
	if err != nil {
		return serverKeys{}, fmt.Errorf("server: generate xkey: %w", err)
	}
	k := serverKeys{kp: kp, xkp: xkp}
	k.id, _ = kp.PublicKey()
	k.xkeyPublic, _ = xkp.PublicKey()
	return k, nil
}

// Start opens the client listener (and the monitoring one, if enabled)
// and begins accepting connections. It returns once both are listening.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return ErrServerClosed
	}
	if s.ln != nil {
		return errors.New("server: already started")
	}
	addr := net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: listen on %s: %w", addr, err)
	}
	// Before the WebSocket listener serves: its clients' INFO names the
	// client port.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		s.port = tcp.Port
	}
	if s.opts.JetStream {
		if err := s.startJetStream(); err != nil {
			_ = ln.Close()
			return err
		}
	}
	if s.opts.WebSocket.enabled() {
		if err := s.startWebSocket(); err != nil {
			_ = ln.Close()
			s.stopJetStream()
			return err
		}
	}
	if s.opts.MQTT.enabled() {
		if err := s.startMQTT(); err != nil {
			_ = ln.Close()
			if s.ws != nil {
				_ = s.ws.http.Close()
			}
			if s.js != nil {
				s.js.Shutdown()
			}
			return err
		}
	}
	if s.opts.HTTPPort != 0 || s.opts.HTTPSPort != 0 {
		if err := s.startMonitoring(); err != nil {
			_ = ln.Close()
			s.stopMQTT()
			if s.ws != nil {
				_ = s.ws.http.Close() // not stopWebSocket: its handlers may wait on s.mu, held here
			}
			s.stopJetStream()
			return err
		}
	}
	s.ln = ln
	s.started = time.Now()
	s.startExtensions()
	if err := s.startSysRequests(); err != nil {
		s.log.Warn("system requests not served", "err", err)
	}
	s.startResolver()
	if s.opts.MaxPendingTotal > 0 {
		s.chunks.bound(s.opts.MaxPendingTotal)
		s.wg.Add(1)
		go s.shedder()
	}
	s.wg.Add(1)
	go s.acceptLoop(ln, "client", s.accept)
	for _, l := range s.leafLinks {
		s.wg.Add(1)
		go l.run()
	}
	s.warnWeakHashes()
	s.log.Info("listening for clients", "addr", ln.Addr().String(), "server_id", s.id, "version", Version)
	return nil
}

// Addr is the client listener's address, or nil before Start.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// HTTPAddr is the monitoring listener's address, or nil when disabled.
func (s *Server) HTTPAddr() net.Addr {
	if m := s.monitoring(); m != nil {
		return m.Addr()
	}
	return nil
}

// HTTPSAddr is the HTTPS monitoring listener's address, or nil when
// disabled.
func (s *Server) HTTPSAddr() net.Addr {
	if m := s.monitoring(); m != nil {
		return m.TLSAddr()
	}
	return nil
}

// ID is the server's unique id, as sent in INFO.
func (s *Server) ID() string { return s.id }

// acceptLoop hands ln's connections to accept until ln closes; kind
// names the listener in the log.
func (s *Server) acceptLoop(ln net.Listener, kind string, accept func(net.Conn)) {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait a little, retry.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn(kind+" accept failed", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		accept(nc)
	}
}

// accept registers a new connection, sends INFO and starts its reader and
// writer goroutines.
func (s *Server) accept(nc net.Conn) {
	s.admit(newConn(s, nc, s.nextID.Add(1)))
}

// admit is accept for a connection of either listener: TCP, or WebSocket
// (ws.go), whose TLS if any was the HTTP server's.
func (s *Server) admit(c *conn) {
	id, nc := c.id, c.nc
	if c.auth().nonce {
		c.nonce = newNonce()
	}
	info := s.infoFor(c)
	s.mu.Lock()
	if s.shutdown || s.lameDuck {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	live := s.liveOpts()
	full := len(s.conns) >= live.MaxConnections
	// Connections yet to authenticate have a budget of their own, so
	// that idle sockets cannot take every slot from real clients.
	full = full || c.auth().required && s.preAuth() >= int64(live.MaxUnauthenticated)
	if !full {
		s.conns[id] = c
	}
	s.wg.Add(2)
	s.mu.Unlock()
	s.totalConns.Add(1)

	if full {
		c.out.appendControl(info)
		s.refuse(c)
		return
	}
	c.log.Info("client connected")
	c.countUnauthenticated()
	if s.opts.TLS.enabled() && !c.ws && c.mqtt == nil {
		// The handshake waits on the client: it runs on the reader
		// goroutine, which starts the writer once the socket is TLS.
		go func() { defer s.wg.Done(); c.serveTLS(info) }()
		return
	}
	c.out.appendControl(info)
	c.startAuth()
	if c.mqtt != nil {
		// An MQTT client's keepalive is its own: the server reads it,
		// and never pings (mqttconn.go).
		c.startWriter()
		go func() { defer s.wg.Done(); c.mqttReadLoop() }()
		return
	}
	c.resetPingTimer(s.firstPingDelay())
	c.out.signal()
	c.startWriter()
	go func() { defer s.wg.Done(); c.readLoop() }()
}

// refuseLinger bounds how long a refused connection is kept to read the
// client's CONNECT, so that its write does not fail before it has read why.
const refuseLinger = 2 * time.Second

// refuse tells a client over the connection limit why, the way the
// reference does, and hangs up. The socket lingers half-closed while the
// client's handshake is drained; closing at once would reset it and the
// client would see a broken pipe instead of the error.
func (s *Server) refuse(c *conn) {
	s.log.Warn("connection refused", "remote", c.nc.RemoteAddr().String(), "reason", errMaxConnections.text)
	c.closing.Store(true)
	c.out.appendControl("-ERR '" + errMaxConnections.text + "'\r\n")
	go func() {
		defer s.wg.Done()
		defer c.nc.Close()
		taken := c.out.take(nil)
		bufs := make(net.Buffers, len(taken))
		for i, ch := range taken {
			bufs[i] = ch.b
		}
		_ = c.nc.SetDeadline(time.Now().Add(refuseLinger))
		_, err := bufs.WriteTo(c.nc)
		c.out.written(taken)
		if err != nil {
			return
		}
		if tcp, ok := c.nc.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, c.nc)
	}()
	s.wg.Done() // no reader goroutine for this one
}

// firstPingDelay is the reference's short first keepalive: at most
// FirstPingDelay, plus up to 20% jitter so connections don't ping in step.
func (s *Server) firstPingDelay() time.Duration {
	live := s.liveOpts()
	d := min(live.PingInterval, live.FirstPingDelay)
	if j := int64(d / 5); j > 0 {
		d += time.Duration(mathrand.Int64N(j))
	}
	return d
}

// connList is a snapshot of the open connections, for the callers that
// visit each without holding s.mu.
func (s *Server) connList() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	return conns
}

// removeConn forgets a closed connection, folding its traffic into the
// server totals.
func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
	outMsgs, outBytes := c.out.counts()
	s.closedInMsgs.Add(c.inMsgs.Load())
	s.closedInBytes.Add(c.inBytes.Load())
	s.closedOutMsgs.Add(outMsgs)
	s.closedOutBytes.Add(outBytes)
}

// Shutdown stops accepting, lets every connection flush what is queued for
// it and closes it, then waits for all goroutines. When ctx ends first,
// the remaining sockets are closed at once and ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.shutdown = true
	close(s.quit)
	ln, mon := s.ln, s.http
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	if ln != nil {
		_ = ln.Close()
	}
	s.stopWebSocket()
	s.stopMQTT()
	s.stopExtensions()
	s.stopSysRequests()
	s.stopActivationExpiry()
	if mon != nil {
		_ = mon.Shutdown(ctx) // its requests are cut short when ctx ends
	}
	s.stopJetStream()
	for _, c := range conns {
		c.close("Server Shutdown", true)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.log.Info("server stopped")
		return nil
	case <-ctx.Done():
		for _, c := range conns {
			_ = c.raw.Close()
		}
		<-done
		return ctx.Err()
	}
}

// stopJetStream closes JetStream once: it stores nothing more, and
// unacked publishes are retried by clients.
func (s *Server) stopJetStream() {
	if s.js != nil {
		s.jsStop.Do(func() {
			s.stopAccountsJetStream(s.accountSet())
			s.js.Shutdown()
			s.closeJetStreamCaches()
		})
	}
}
