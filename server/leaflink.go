package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// leafLink keeps one remote (a hub bus joins as a leaf node) connected:
// it dials, joins, and when the connection is lost or refused dials again
// after a back-off with jitter, trying the hub's URLs in turn. While up,
// the connection is a conn whose leaf field is set: its reader takes the
// hub's LS+, LS- and messages, its writer carries this server's interest
// and the messages the hub wants (leafinterest.go, leafroute.go).
type leafLink struct {
	srv    *Server
	remote LeafRemote
	name   string // the remote in logs and metrics: its first URL, no credentials

	mu   sync.Mutex // guards the fields below
	urls []*url.URL // configured, then those the hub advertised
	next int        // index into urls of the next dial
	conn *conn      // the connection while up, else nil
	loop bool       // the hub reported a loop: rest leafLoopDelay
}

// leafState is a leaf link connection's own state, beside what it shares
// with client connections.
type leafState struct {
	link *leafLink
	url  *url.URL
	info leafInfo
	// perms bound what crosses: Publish what may go to the hub,
	// Subscribe what may come from it (the hub's import and export
	// rights, the remote's deny lists, and the JetStream API, which
	// stays in its domain). Immutable.
	perms *permissions
	// checkExports and checkImports are false when perms can refuse
	// nothing but '$' subjects, the fast path for every other message.
	checkExports, checkImports bool
	// stored is the export rules without leafDenies, for the stored
	// subject a JetStream delivery shows (mayExportTo); nil: none.
	stored *permissions
	// queues are the hub's queue groups of the message being routed
	// from it; reader-owned.
	queues []byte
	down   chan struct{} // closed once the connection is closed
}

// leafDenies are the subjects that never cross a link, either way: bus
// keeps its own JetStream domain (reached as $JS.<domain>.API), as the
// reference denies them between different domains, and its own API and
// system subjects, which a hub's client must not reach (nor see) through
// the link: a redrive, a $SYS.REQ.USER.INFO asked across it would run
// with the link's rights, which allow everything (security issue #22).
var leafDenies = []string{"$JS.API.>", "$KV.>", "$OBJ.>", "$BUS.>", "$SYS.>"}

func newLeafLink(s *Server, r LeafRemote) *leafLink {
	l := &leafLink{srv: s, remote: r}
	for _, raw := range r.URLs {
		u, _ := parseLeafURL(raw) // validated
		l.urls = append(l.urls, u)
	}
	l.name = l.urls[0].Redacted() // as configured: a stable label
	if !r.NoRandomize {
		mathrand.Shuffle(len(l.urls), func(i, j int) { l.urls[i], l.urls[j] = l.urls[j], l.urls[i] })
	}
	return l
}

// run dials and redials until the server shuts down. Started by Start,
// counted in Server.wg.
func (l *leafLink) run() {
	defer l.srv.wg.Done()
	s := l.srv
	base := s.opts.LeafNodes.ReconnectInterval
	wait := time.Duration(0)
	for {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-s.quit:
				t.Stop()
				return
			case <-t.C:
			}
		}
		c, err := l.connect()
		if err != nil {
			l.failed(err.Error())
			wait = min(max(2*wait, base), MaxLeafReconnect)
			wait = jitter(wait)
			continue
		}
		select {
		case <-s.quit:
			c.close("Server Shutdown", true)
			<-c.leaf.down
			return
		case <-c.leaf.down:
		}
		l.mu.Lock()
		loop := l.loop
		l.loop = false
		l.mu.Unlock()
		wait = jitter(base)
		if loop {
			wait = leafLoopDelay
		}
	}
}

// current is the link's connection while it is up, else nil.
func (l *leafLink) current() *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn
}

// jitter spreads d by up to a quarter more, so that leaves cut off at
// once do not all dial again in step.
func jitter(d time.Duration) time.Duration {
	if q := int64(d / 4); q > 0 {
		d += time.Duration(mathrand.Int64N(q))
	}
	return d
}

func (l *leafLink) failed(reason string) {
	l.srv.log.Warn("leafnode connect failed", "remote", l.name, "err", reason)
}

// nextURL is the URL of the next dial, in turn.
func (l *leafLink) nextURL() *url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.urls[l.next%len(l.urls)]
	l.next++
	return u
}

// connect dials the next URL and joins: it reads the hub's INFO,
// upgrades to TLS when asked, sends CONNECT and this server's interest,
// and starts the connection's reader and writer.
func (l *leafLink) connect() (*conn, error) {
	s, r := l.srv, &l.remote
	u := l.nextURL()
	dial := l.dialTCP
	if isWebSocketURL(u) {
		dial = l.dialWebSocket
	}
	raw, nc, info, err := dial(u)
	if err != nil {
		return nil, err
	}
	connect, err := s.leafConnect(r, u, info.Nonce)
	if err != nil {
		_ = raw.Close()
		return nil, err
	}
	c := s.newLeafConn(l, raw, nc, u, info)
	if ws, ok := raw.(*wsConn); ok {
		ws.reason = c.closeReason
	}
	c.out.appendControl(connect)
	if !l.up(c) {
		c.out.close()
		_ = raw.Close()
		return nil, ErrServerClosed
	}
	s.leafInterest.join(c) // queues the LS+ of this server's interest
	c.resetPingTimer(s.firstPingDelay())
	c.out.signal()
	c.startWriter()
	go func() { defer s.wg.Done(); c.readLoop() }()
	s.log.Info("leafnode connected", "remote", u.Redacted(), "hub", info.ServerID, "hub_name", info.Name, "cid", c.id)
	return c, nil
}

// dialTCP opens a nats:// or tls:// link up to the hub's INFO,
// upgrading to TLS when asked. raw is the socket, nc what the reader and
// writer use (raw, or TLS over it, or either with bytes read ahead).
func (l *leafLink) dialTCP(u *url.URL) (raw, nc net.Conn, info leafInfo, err error) {
	r := &l.remote
	ctx, cancel := context.WithTimeout(context.Background(), r.DialTimeout)
	defer cancel()
	var d net.Dialer
	raw, err = d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, nil, info, err
	}
	info, rest, err := readLeafInfo(raw, r.FirstInfoTimeout)
	if err != nil {
		_ = raw.Close()
		return nil, nil, info, fmt.Errorf("%s: %w", u.Redacted(), err)
	}
	nc = raw
	if rest != nil {
		nc = rest
	}
	if info.TLSRequired || u.Scheme == "tls" || r.TLS != nil {
		if nc, err = l.handshake(raw, u); err != nil {
			_ = raw.Close()
			return nil, nil, info, fmt.Errorf("%s: tls: %w", u.Redacted(), err)
		}
	}
	return raw, nc, info, nil
}

// up records c as the link's connection and counts its goroutines;
// false once the server is shutting down.
func (l *leafLink) up(c *conn) bool {
	s := l.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	s.wg.Add(2)
	l.mu.Lock()
	l.conn = c
	l.mu.Unlock()
	return true
}

// readLeafInfo reads the hub's first line, which must be INFO, within
// timeout. rest is non-nil when the hub sent more behind it, which the
// reader must see first.
func readLeafInfo(nc net.Conn, timeout time.Duration) (leafInfo, net.Conn, error) {
	var info leafInfo
	_ = nc.SetReadDeadline(time.Now().Add(timeout))
	defer nc.SetReadDeadline(time.Time{})
	br := bufio.NewReaderSize(nc, 4096)
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > leafControlLine {
			return info, nil, errors.New("INFO longer than the control line limit")
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return info, nil, fmt.Errorf("waiting for INFO: %w", err)
		}
	}
	js, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("INFO "))
	if !ok {
		return info, nil, fmt.Errorf("expected INFO, got %q", truncate(line, 64))
	}
	if err := json.Unmarshal(js, &info); err != nil {
		return info, nil, fmt.Errorf("bad INFO: %w", err)
	}
	// The reference's check for the wrong port: a client or route port
	// sends no leafnode_urls (and no info_on_connect).
	if info.CID == 0 || info.LeafNodeURLs == nil && !info.InfoOnConnect {
		return info, nil, errors.New("attempted to connect to a port that is not a leafnode port")
	}
	var rest net.Conn
	if br.Buffered() > 0 {
		rest = &bufferedConn{Conn: nc, r: br}
	}
	return info, rest, nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// bufferedConn is a connection whose first bytes were read ahead.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// handshake makes the link TLS, verifying the hub as the remote's tls
// block says.
func (l *leafLink) handshake(raw net.Conn, u *url.URL) (net.Conn, error) {
	cfg, timeout, err := l.tlsConfig(u)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(raw, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return tc, nil
}

// tlsConfig is the client side of the remote's tls block for a dial of
// u, and the bound on its handshake.
func (l *leafLink) tlsConfig(u *url.URL) (*tls.Config, time.Duration, error) {
	cfg := &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	timeout := DefaultTLSTimeout
	t := l.remote.TLS
	if t == nil {
		return cfg, timeout, nil
	}
	timeout = t.Timeout
	if t.ServerName != "" {
		cfg.ServerName = t.ServerName
	}
	cfg.InsecureSkipVerify = t.InsecureSkipVerify
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, 0, fmt.Errorf("ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, 0, fmt.Errorf("ca_file %q holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, 0, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, timeout, nil
}

// newLeafConn makes the conn of a joined link: the hub's protocol
// parser, rights from INFO and the remote, and no client bookkeeping.
func (s *Server) newLeafConn(l *leafLink, raw, nc net.Conn, u *url.URL, info leafInfo) *conn {
	c := newConn(s, raw, s.nextID.Add(1))
	c.nc = nc
	c.parser = newLeafParser(s.liveOpts().MaxPayload)
	c.opts = connectOptions{Headers: true, echo: true}
	c.log = s.log.With("leafnode", u.Redacted(), "cid", c.id)
	ls := &leafState{link: l, url: u, info: info, down: make(chan struct{})}
	ls.setRights(info, &l.remote)
	c.leaf = ls
	if isWebSocketURL(u) {
		l.learnURLs(info.WSConnectURLs, u)
	} else {
		l.learnURLs(info.LeafNodeURLs, u)
	}
	return c
}

// setRights compiles what may cross the link.
func (ls *leafState) setRights(info leafInfo, r *LeafRemote) {
	p := &Permissions{
		Publish:   &SubjectPermission{Deny: append(append([]string(nil), leafDenies...), r.DenyExports...)},
		Subscribe: &SubjectPermission{Deny: append(append([]string(nil), leafDenies...), r.DenyImports...)},
	}
	if e := info.Export; e != nil {
		p.Publish.Allow = e.Allow
		p.Publish.Deny = append(p.Publish.Deny, e.Deny...)
	}
	if i := info.Import; i != nil {
		p.Subscribe.Allow = i.Allow
		p.Subscribe.Deny = append(p.Subscribe.Deny, i.Deny...)
	}
	ls.perms = compilePermissions(p)
	if own := p.Publish.Deny[len(leafDenies):]; p.Publish.Allow != nil || len(own) > 0 {
		ls.stored = compilePermissions(&Permissions{Publish: &SubjectPermission{Allow: p.Publish.Allow, Deny: own}})
	}
	ls.checkExports = p.Publish.Allow != nil || len(p.Publish.Deny) > len(leafDenies)
	ls.checkImports = len(p.Subscribe.Allow) > 0 || len(p.Subscribe.Deny) > len(leafDenies)
}

// mayExport reports whether a message on subject may go to the hub.
// see BenchmarkLeafPublish
func (ls *leafState) mayExport(subject []byte) bool {
	if !ls.checkExports && (len(subject) == 0 || subject[0] != '$') {
		return true
	}
	return ls.perms.canPublish(bytesView(subject))
}

// mayExportTo reports whether a message the LMSG carries on to, showing
// subject, may go to the hub. For a JetStream delivery (to, the hub
// client's inbox, differs from the stored subject) the link's rules see
// to, the subject that crosses, as the reference's do; the stored subject
// answers only to the operator's and the hub's own export rules, not to
// leafDenies: a hub client that made a consumer through the domain API
// reads a bucket's $KV messages as it does any other (its direct gets
// cross already), while nothing published on $KV.> crosses.
func (ls *leafState) mayExportTo(to, subject []byte) bool {
	if !ls.mayExport(to) {
		return false
	}
	return string(to) == string(subject) || ls.stored == nil || ls.stored.canPublish(bytesView(subject))
}

// mayImport reports whether a message on subject may come from the hub.
func (ls *leafState) mayImport(subject []byte) bool {
	if !ls.checkImports && (len(subject) == 0 || subject[0] != '$') {
		return true
	}
	return ls.perms.canSubscribe(bytesView(subject), "")
}

// mayAnnounce reports whether this server's interest in subject (queue
// "" for plain) is sent to the hub: what may come from it.
func (ls *leafState) mayAnnounce(subject, queue string) bool {
	return ls.perms.canSubscribe(subject, queue)
}

// learnURLs adds the leafnode URLs a hub advertises ("host:port") to
// those dialed, with the scheme and credentials of the URL in use.
func (l *leafLink) learnURLs(hostPorts []string, via *url.URL) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, hp := range hostPorts {
		known := false
		for _, u := range l.urls {
			if strings.EqualFold(u.Host, hp) {
				known = true
				break
			}
		}
		if !known {
			nu := *via
			nu.Host = hp
			l.urls = append(l.urls, &nu)
		}
	}
}

// leafDown is called once when a link's connection has closed: the
// supervisor dials again.
func (c *conn) leafDown(reason string) {
	l := c.leaf.link
	c.srv.leafInterest.leave(c)
	l.mu.Lock()
	if l.conn == c {
		l.conn = nil
	}
	l.mu.Unlock()
	close(c.leaf.down)
	c.log.Info("leafnode disconnected", "reason", reason)
}

// handleLeafOp acts on an op of the hub's protocol.
func (c *conn) handleLeafOp(o *op) error {
	switch o.kind {
	case opLeafMsg:
		c.heard = true
		c.processLeafMsg(o)
	case opLeafSub:
		c.heard = true
		c.processLeafSub(o)
	case opLeafUnsub:
		c.processLeafUnsub(o)
	case opInfo:
		var info leafInfo
		if json.Unmarshal(o.json, &info) == nil {
			c.leaf.link.learnURLs(info.LeafNodeURLs, c.leaf.url)
		}
	case opErr:
		text := strings.Trim(string(o.text), "' ")
		c.log.Warn("leafnode error from hub", "err", text)
		if strings.HasPrefix(text, "Loop detected") {
			l := c.leaf.link
			l.mu.Lock()
			l.loop = true
			l.mu.Unlock()
		}
	}
	return nil
}
