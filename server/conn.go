package server

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/subjects"
)

// Read buffer bounds: idle connections stay small, busy ones read in big
// gulps so one syscall carries many ops.
const (
	minReadBuf = 512
	maxReadBuf = 64 * 1024
	// shortReadsToShrink is how many reads in a row must use under an
	// eighth of the buffer before it halves. A stream read in messages
	// (WebSocket) alternates a full read with a short one at each
	// message's end; halving at the first short read made a new buffer
	// every two reads (see BenchmarkWebSocketPubSub).
	shortReadsToShrink = 16
)

// maxDeferredWakes bounds the list of writers a read wakes at its end;
// past it, writers are woken at once.
const maxDeferredWakes = 64

// conn is one client connection. Its reader goroutine (readLoop) parses
// and acts on ops; its writer goroutine (writeLoop) drains out. Other
// connections' readers deliver messages into out.
type conn struct {
	srv *Server
	// raw is the accepted socket, closed to hang up; nc is what the
	// reader and writer use: raw, or the TLS connection over it, set
	// before the writer starts.
	raw   net.Conn
	nc    net.Conn
	id    uint64
	ip    string
	start time.Time
	log   *slog.Logger
	out   *outbound
	// leaf is set on a leaf link's connection (leaflink.go), which is a
	// hub's, not a client's.
	leaf *leafState
	// ws is set on a WebSocket client's connection (ws.go): nc is then
	// the WebSocket stream, and TLS was the HTTP server's.
	ws bool
	// wsCookies are the credentials of the upgrade's cookies (wsauth.go).
	wsCookies credentials
	// mqtt is set on an MQTT client's connection (mqtt.go): its reader
	// reads MQTT packets, its queue frames messages as PUBLISH.
	mqtt *mqttSession

	// Owned by the reader goroutine.
	parser   *parser
	opts     connectOptions
	wakes    []*conn       // writers to wake once the current read is processed
	stallOn  chan struct{} // a subscriber this read filled past 3/4 of its limit
	scratch  []byte        // for building status headers
	pongSent bool          // the first PONG went out (sendConnectInfo)
	// msgTrace is the traced publish this reader is routing, else nil
	// (msgtrace.go).
	msgTrace *msgTrace
	fanout   leafFanout // the leaf links a message this reader routes crosses
	// Authentication and permissions (connauth.go), reader-owned.
	user      *identity       // nil until authenticated (or when auth is off)
	needAuth  bool            // clients must authenticate and this one has not
	connected bool            // a CONNECT was accepted
	pubPerms  *permissions    // set only when the user's publishes are limited
	subPerms  *permissions    // set only when the user's subscriptions are limited
	pubCache  map[string]bool // publish decisions by subject, see pubAllowed

	nonce     string            // sent in INFO for nkey users to sign; immutable
	peerCert  *x509.Certificate // the client's TLS certificate, reader-owned
	writing   atomic.Bool       // the writer goroutine was started
	asyncInfo atomic.Bool       // CONNECT said protocol 1: the client takes INFO updates
	// authed mirrors user for other goroutines; reauth is an identity a
	// config reload gave, for the reader to take (reload.go).
	authed      atomic.Pointer[identity]
	reauth      atomic.Pointer[identity]
	pendingAuth atomic.Bool // counted in Server.unauthenticated

	inMsgs  atomic.Int64
	inBytes atomic.Int64
	// lastIn is when the client last sent a PUB, SUB or PING (unix
	// nanoseconds), set once per read: the keepalive PING is skipped for
	// a client heard from within the ping interval, as in the reference.
	lastIn atomic.Int64
	heard  bool // reader-owned: the current read held such an op
	// lastActivity is when the client last sent a PUB, SUB or UNSUB or
	// was written a message (unix nanoseconds), for /connz. It reuses
	// the clock readings the reader and writer take anyway: once per
	// read, once per write.
	lastActivity atomic.Int64
	active       bool // reader-owned: the current read held a PUB, SUB or UNSUB

	mu   sync.Mutex               // guards the fields below; taken before the trie's lock
	subs map[string]*subscription // by sid; nil once closed
	// acc is the account the connection is in (account.go) and trie
	// its subject space, acc.trie, kept beside it for the router. Only
	// the reader changes them (under mu), so the reader reads them
	// freely. counted is the account whose connection count includes
	// this one: acc once authenticated, nil before and after close.
	acc          *account
	trie         *subjects.Trie[*subscription]
	counted      *account
	pingsOut     int
	pingSentAt   time.Time // when the last keepalive PING went out; zero before the first
	pingTimer    *time.Timer
	authTimer    *time.Timer   // until a valid CONNECT; nil once it is stopped or fired
	authTimedOut bool          // the auth timer fired: the connection is closing
	expiryTimer  *time.Timer   // closes it when its user JWT expires (jwtauth.go); under mu
	reason       string        // why the connection closed
	rtt          time.Duration // last PING to PONG, or CONNECT's estimate; for /connz
	desc         clientDesc    // who the client said it is, for /connz
	// replies are the reply subjects this connection may answer under
	// allow_responses, granted as requests are delivered to it.
	replies map[string]replyGrant

	closing atomic.Bool
	// announced is set once the CONNECT event went out (sysevents.go),
	// so that only those connections get a DISCONNECT event.
	announced atomic.Bool
}

// connectOptions are what a client declared in CONNECT. Before CONNECT
// the reference behaves as if verbose, pedantic and echo were on.
type connectOptions struct {
	Verbose      *bool  `json:"verbose"`
	Pedantic     *bool  `json:"pedantic"`
	Echo         *bool  `json:"echo"`
	Headers      bool   `json:"headers"`
	NoResponders bool   `json:"no_responders"`
	Protocol     int    `json:"protocol"`
	Name         string `json:"name"`
	Lang         string `json:"lang"`
	Version      string `json:"version"`
	credentials

	verbose, pedantic, echo bool
}

func newConn(s *Server, nc net.Conn, id uint64) *conn {
	live := s.liveOpts() // a reload's limits apply to the connections after it
	c := &conn{
		srv:    s,
		raw:    nc,
		nc:     nc,
		id:     id,
		start:  time.Now(),
		out:    newOutbound(s.chunks, live.MaxPending),
		parser: newParser(live.MaxControlLine, live.MaxPayload),
		subs:   make(map[string]*subscription),
		acc:    s.global,
		trie:   s.subs,
	}
	c.opts.verbose, c.opts.pedantic, c.opts.echo = true, true, true
	if addr, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		c.ip = addr.IP.String()
	}
	c.log = s.log.With("cid", id, "remote", nc.RemoteAddr().String())
	return c
}

// finishRead ends what a read's ops started: it stamps when the client
// was last heard from and last active, hands queued frames to their
// writers, and waits for a subscriber falling behind.
func (c *conn) finishRead() {
	if c.heard || c.active {
		now := time.Now().UnixNano()
		if c.heard {
			c.heard = false
			c.lastIn.Store(now)
		}
		if c.active {
			c.active = false
			c.lastActivity.Store(now)
		}
	}
	c.wakeWriters()
	c.stallIfBehind()
}

// readLoop is the reader goroutine: it reads, parses and acts until the
// connection fails or breaks the protocol.
func (c *conn) readLoop() {
	buf := make([]byte, minReadBuf)
	short := 0 // reads in a row that used under an eighth of buf
	for {
		n, err := c.nc.Read(buf)
		if c.reauth.Load() != nil {
			c.takeReload()
		}
		if n > 0 {
			perr := c.parser.parse(buf[:n], c)
			c.finishRead()
			if perr != nil {
				c.protocolFailure(perr)
				return
			}
			switch {
			case c.parser.connectFirst:
				// Unauthenticated: CONNECT is one line of at most
				// MaxControlLine, so keep the smallest buffer.
			case n == len(buf) && len(buf) < maxReadBuf:
				buf, short = make([]byte, 2*len(buf)), 0
			case n >= len(buf)/8:
				short = 0
			case len(buf) > minReadBuf:
				if short++; short >= shortReadsToShrink {
					buf, short = make([]byte, len(buf)/2), 0
				}
			}
		}
		if err != nil {
			switch {
			case c.closing.Load():
			case errors.Is(err, io.EOF):
				c.close("Client Closed", false)
			default:
				c.close("Read Error: "+err.Error(), false)
			}
			return
		}
	}
}

// startWriter starts the writer goroutine, counted in Server.wg by
// accept.
func (c *conn) startWriter() {
	if tc, ok := c.nc.(*net.TCPConn); ok {
		d := newDirectWriter(tc)
		c.out.mu.Lock()
		c.out.direct = d
		c.out.mu.Unlock()
	}
	c.writing.Store(true)
	go func() { defer c.srv.wg.Done(); c.writeLoop() }()
}

// writeLoop is the writer goroutine: it sleeps until woken, writes all
// that is queued in one call, and exits once the queue is closed and
// drained or the socket fails.
func (c *conn) writeLoop() {
	defer c.nc.Close()
	defer c.out.release() // what a failed write left queued
	deadline := c.srv.liveOpts().WriteDeadline
	var taken []*chunk
	var iov net.Buffers
	bufs := new(net.Buffers) // WriteTo consumes its receiver, which escapes: one for all writes
	for range c.out.wake {
		for taken = c.out.take(taken); len(taken) > 0; taken = c.out.take(taken) {
			iov = iov[:0]
			for _, ch := range taken {
				iov = append(iov, ch.b)
			}
			now := time.Now()
			_ = c.nc.SetWriteDeadline(now.Add(deadline))
			*bufs = iov
			_, err := bufs.WriteTo(c.nc)
			if err != nil {
				c.out.close() // before the turn ends, so no reader takes the queue again
			}
			if c.out.tookMsgs {
				c.lastActivity.Store(now.UnixNano())
			}
			c.out.written(taken)
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					c.srv.slowConsumers.Add(1)
					c.close("Slow Consumer (Write Deadline)", false)
				} else {
					c.close("Write Error: "+err.Error(), false)
				}
				return
			}
		}
		if c.out.drained() {
			return
		}
	}
}

// queueControl queues a protocol line for this connection's own writer.
func (c *conn) queueControl(line string) {
	if c.srv.tracer.Load() != nil {
		c.traceOut(line)
	}
	c.out.appendControl(line)
	c.deferWake(c)
}

// sendErr queues -ERR with the reference's text.
func (c *conn) sendErr(e *protoError) {
	c.queueControl("-ERR '" + e.text + "'\r\n")
}

// deferWake records that t's writer has new frames; the reader wakes it
// after processing the current read, so a burst becomes one write.
func (c *conn) deferWake(t *conn) {
	for i := len(c.wakes) - 1; i >= 0; i-- {
		if c.wakes[i] == t {
			return
		}
	}
	if len(c.wakes) == maxDeferredWakes {
		t.out.signal()
		return
	}
	c.wakes = append(c.wakes, t)
}

// wakeWriters hands what this read queued to each target: written here
// when short, else to its writer (inline.go).
func (c *conn) wakeWriters() {
	for i, t := range c.wakes {
		t.flushOrWake()
		c.wakes[i] = nil
	}
	c.wakes = c.wakes[:0]
}

// Bounds of a publisher's wait for a subscriber that is falling behind.
const (
	stallMax = 5 * time.Millisecond
)

// stallIfBehind gives a subscriber this read filled past 3/4 of its
// pending limit a moment to drain: the reader waits until that writer
// catches up, at most stallMax. A healthy subscriber that is slightly
// slower than a burst keeps its messages; a stuck one costs the publisher
// at most stallMax per read before it hits the limit and is cut off as a
// slow consumer. (nats-server stalls producers the same way.)
func (c *conn) stallIfBehind() {
	ch := c.stallOn
	if ch == nil {
		return
	}
	c.stallOn = nil
	t := time.NewTimer(stallMax)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// protocolFailure reports a parse or handler error to the client the way
// the reference does and closes the connection.
func (c *conn) protocolFailure(err error) {
	var pe *protoError
	if !errors.As(err, &pe) {
		c.close("Protocol Error: "+err.Error(), true)
		return
	}
	switch {
	case pe.fatal && pe.text != "":
		c.wakeWriters()
		c.closeWithErr(pe.text, pe.text)
	case pe.fatal:
		c.close("Protocol Violation", true)
	default:
		c.sendErr(pe)
		c.wakeWriters()
	}
}

// closeWithErr sends a last -ERR with text and closes the connection
// once it is flushed. Nothing queued after it, such as a keepalive PING
// from the timer goroutine, reaches the client.
func (c *conn) closeWithErr(text, reason string) {
	// The reason is set first: a client that hangs up on reading the
	// -ERR makes the reader close too, and that must not name a read
	// error as the cause.
	c.mu.Lock()
	if c.reason == "" {
		c.reason = reason
	}
	c.mu.Unlock()
	if c.srv.tracer.Load() != nil {
		c.traceOut("-ERR '" + text + "'")
	}
	c.out.appendLast("-ERR '" + text + "'\r\n")
	c.close(reason, true)
}

// handleOp acts on one op; see opHandler.
func (c *conn) handleOp(o *op) error {
	if t := c.srv.tracer.Load(); t != nil {
		c.traceIn(t, o)
	}
	if c.needAuth && o.kind != opConnect {
		// Only reachable with a no_auth_user; else the parser refused.
		if err := c.authNoCredentials(); err != nil {
			return err
		}
	}
	switch o.kind {
	case opPub:
		c.heard, c.active = true, true
		return c.processPub(o)
	case opSub:
		c.heard, c.active = true, true
		return c.processSub(o)
	case opUnsub:
		c.active = true
		c.processUnsub(o)
	case opPing:
		c.heard = true
		c.queueControl("PONG\r\n")
		if !c.pongSent {
			c.pongSent = true
			c.sendConnectInfo()
		}
	case opPong:
		c.mu.Lock()
		if c.pingsOut > 0 && !c.pingSentAt.IsZero() {
			c.rtt = max(time.Since(c.pingSentAt), time.Nanosecond)
		}
		c.pingsOut = 0
		c.mu.Unlock()
	case opConnect:
		return c.processConnect(o.json)
	default:
		return c.handleLeafOp(o)
	}
	return nil
}

func (c *conn) processConnect(js []byte) error {
	opts := connectOptions{}
	if !c.stopAuthTimer() {
		return errConnClosed // the auth timeout fired first and is closing
	}
	if err := json.Unmarshal(js, &opts); err != nil {
		return errMalformed
	}
	// Recorded before authenticating, so /connz shows who failed to.
	c.connectedMonitor(newClientDesc(&opts))
	if err := c.authenticate(&opts); err != nil {
		return err
	}
	opts.credentials = credentials{} // keep no secret longer than needed
	if opts.Protocol < 0 || opts.Protocol > 1 {
		return errBadClientProtocol
	}
	// Headers need both sides, as in the reference.
	opts.Headers = opts.Headers && !c.srv.opts.NoHeaderSupport
	if opts.NoResponders && !opts.Headers {
		return errNoRespNeedsHeaders
	}
	opts.verbose = opts.Verbose == nil || *opts.Verbose
	opts.pedantic = opts.Pedantic == nil || *opts.Pedantic
	opts.echo = opts.Echo == nil || *opts.Echo
	if c.connected {
		// As in the reference, a second CONNECT starts over: the
		// subscriptions made so far are dropped.
		c.dropSubs()
	}
	c.connected = true
	c.opts = opts
	c.announceConnect()
	c.asyncInfo.Store(opts.Protocol >= 1)
	if opts.verbose {
		c.queueControl("+OK\r\n")
	}
	c.log.Debug("client connect", "name", opts.Name, "lang", opts.Lang, "version", opts.Version)
	c.resetPingTimer(c.srv.firstPingDelay())
	return nil
}

func (c *conn) ok() {
	if c.opts.verbose {
		c.queueControl("+OK\r\n")
	}
}

// close tears the connection down once. With flush, frames already queued
// (such as a final -ERR) are written before the socket closes; without,
// the socket closes at once.
func (c *conn) close(reason string, flush bool) {
	if !c.closing.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	if c.reason == "" {
		c.reason = reason
	}
	reason = c.reason // closeWithErr's, when it came first
	rtt, desc := c.rtt, c.desc
	account, acc := c.accountName(), c.acc
	subs := c.subs
	c.subs = nil
	c.replies = nil
	c.leaveAccountLocked()
	if c.pingTimer != nil {
		c.pingTimer.Stop()
	}
	if c.authTimer != nil {
		c.authTimer.Stop()
		c.authTimer = nil
	}
	if c.expiryTimer != nil {
		c.expiryTimer.Stop()
		c.expiryTimer = nil
	}
	for _, sub := range subs {
		if c.trie.Remove(sub.subject, sub.queue, sub) == nil {
			c.srv.interestChanged(c.trie, sub, -1)
			if sub.remote {
				c.srv.internalSubs.Add(-1)
			}
		}
		c.srv.watchers.changed(sub.subject)
	}
	c.mu.Unlock()
	c.out.close()
	if !flush || !c.writing.Load() {
		_ = c.raw.Close() // no writer to flush and close it
	}
	if c.leaf != nil {
		c.leafDown(reason)
		return
	}
	if c.pendingAuth.CompareAndSwap(true, false) {
		c.srv.unauthenticated.Add(-1)
	}
	if c.mqtt != nil {
		c.mqttClosed(acc, desc.mqttClient, reason)
	}
	c.srv.removeConn(c)
	acc.foldClosed(c)
	cc := c.closedInfo(reason, rtt, desc, subs)
	cc.info.Account = account
	// Kept whether or not /connz asks for auth, as by the reference.
	cc.info.JWT, cc.info.IssuerKey = c.authed.Load().credentialInfo(account)
	c.srv.mon.closed.add(cc)
	c.announceDisconnect(cc)
	if reason == errAuthViolation.text {
		c.announceAuthError(cc)
	}
	c.log.Info("client closed", "reason", reason)
}

// dropSubs removes every subscription of the connection.
func (c *conn) dropSubs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropSubsLocked()
}

// dropSubsLocked is dropSubs with c.mu held.
func (c *conn) dropSubsLocked() {
	for sid, sub := range c.subs {
		delete(c.subs, sid)
		if c.trie.Remove(sub.subject, sub.queue, sub) == nil {
			c.srv.interestChanged(c.trie, sub, -1)
		}
		c.srv.watchers.changed(sub.subject)
	}
}

// slowConsumer drops a connection that cannot keep up, without slowing
// the publisher that found it over its limit.
func (c *conn) slowConsumer() {
	if c.closing.Load() {
		return
	}
	c.srv.slowConsumers.Add(1)
	c.close("Slow Consumer (Pending Bytes)", false)
}
