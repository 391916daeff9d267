package server

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/bus-dev/bus/server/monitor"
)

// The WebSocket listener. An HTTP server takes the upgrade request,
// checks its origin and hands the request to github.com/coder/websocket,
// which owns the frame layer (masking, fragmentation, control frames,
// close codes, permessage-deflate). The upgraded connection is wrapped
// as a net.Conn (websocket.NetConn, one binary message per write) and
// admitted as an ordinary client connection: the same parser, writer,
// authentication, permissions and subject space as the client port.
//
// Bounds before authentication: the request must arrive within
// HandshakeTimeout and fit in wsMaxHandshakeBytes; sockets still in the
// handshake count with the unauthenticated connections against
// MaxUnauthenticated; a WebSocket message is at most wsMaxMessage bytes
// after decompression (the library reads it as a stream, so no message
// is ever held whole), and each PUB inside it is bounded by max_payload
// by the parser, as on TCP.

// wsState is the listener's running state, set by startWebSocket.
type wsState struct {
	ln   net.Listener
	http *http.Server
	tls  bool // wss://
	// handshaking counts sockets accepted whose upgrade is not done.
	handshaking atomic.Int64
	// sockets are net/http's connection goroutines, handlers the
	// upgrades running, waited for by stopWebSocket: a goroutine of
	// either may outlive http.Server.Close (a refused request lingers to
	// let the client read why).
	sockets, handlers sync.WaitGroup
	allowed           map[origin]bool
}

// The paths of the reference's other WebSocket peers: bus accepts no
// leaf nodes, and MQTT clients (path /mqtt) only with an mqtt block,
// when they are MQTT connections as on the mqtt listener (type MQTT_WS).
const (
	wsLeafPath = "/leafnode"
	wsMQTTPath = "/mqtt"
	// wsMQTTProtocol is the subprotocol MQTT clients ask for.
	wsMQTTProtocol = "mqtt"
)

// wsMaxMessage bounds one WebSocket message as the reference does: room
// for a batch of max_payload operations, at most 64 MiB.
func wsMaxMessage(maxPayload int) int64 {
	return min(int64(maxPayload)*8, 64<<20)
}

// startWebSocket opens the listener; called by Start with s.mu held.
func (s *Server) startWebSocket() error {
	o := s.opts.WebSocket
	port := max(o.Port, 0)
	addr := net.JoinHostPort(o.Host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: websocket listen on %s: %w", addr, err)
	}
	ws := &wsState{allowed: map[origin]bool{}}
	for _, a := range o.AllowedOrigins {
		org, _ := parseOrigin(a) // validated in New
		ws.allowed[org] = true
	}
	if o.TLS.enabled() {
		cfg, err := loadTLS(o.TLS)
		if err != nil {
			_ = ln.Close()
			return err
		}
		ln = tls.NewListener(ln, cfg)
		ws.tls = true
	}
	ws.ln = ln
	ws.http = &http.Server{
		Handler:           http.HandlerFunc(s.wsUpgrade),
		ReadHeaderTimeout: o.HandshakeTimeout,
		ReadTimeout:       o.HandshakeTimeout,
		MaxHeaderBytes:    wsMaxHandshakeBytes,
		ConnState:         s.wsConnState,
		ConnContext: func(ctx context.Context, nc net.Conn) context.Context {
			return context.WithValue(ctx, wsSocketKey{}, nc)
		},
		ErrorLog: log.New(wsErrorLog{s.log}, "", 0),
	}
	s.ws = ws
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := ws.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("websocket listener stopped", "err", err)
		}
	}()
	scheme := "ws"
	if ws.tls {
		scheme = "wss"
	}
	s.log.Info("listening for websocket clients", "addr", scheme+"://"+ln.Addr().String())
	if !ws.tls {
		s.log.Warn("websocket listener without TLS: put a TLS-terminating proxy in front")
	}
	return nil
}

// wsSocketKey is the request context's key for the accepted socket,
// whose handshake deadline is lifted once the upgrade is done.
type wsSocketKey struct{}

// wsConnState counts sockets in the handshake, and drops a new one when
// the pre-authentication budget is spent, as accept does on TCP.
func (s *Server) wsConnState(nc net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		if s.wsAuthn.Load().required && s.preAuth() >= int64(s.liveOpts().MaxUnauthenticated) {
			s.log.Warn("websocket connection refused", "remote", nc.RemoteAddr().String(), "reason", "too many unauthenticated connections")
			_ = nc.Close()
		}
		s.ws.handshaking.Add(1)
		s.ws.sockets.Add(1) // on Serve's goroutine, itself in s.wg
	case http.StateHijacked, http.StateClosed:
		s.ws.handshaking.Add(-1)
		s.ws.sockets.Done()
	}
}

// preAuth is the connections yet to authenticate: those admitted, of
// either listener, and the WebSocket sockets still in their handshake.
func (s *Server) preAuth() int64 {
	n := s.unauthenticated.Load()
	if s.ws != nil {
		n += s.ws.handshaking.Load()
	}
	return n
}

// wsUpgrade is the HTTP handler: every path but the reference's leaf and
// MQTT ones is a client's.
func (s *Server) wsUpgrade(w http.ResponseWriter, r *http.Request) {
	s.ws.handlers.Add(1) // its socket is still counted in sockets
	defer s.ws.handlers.Done()
	p := r.URL.EscapedPath()
	// MQTT over WebSocket needs the mqtt listener, as in the reference.
	isMQTT := strings.HasSuffix(p, wsMQTTPath) && s.opts.MQTT.enabled()
	if strings.HasSuffix(p, wsLeafPath) || strings.HasSuffix(p, wsMQTTPath) && !isMQTT {
		s.wsRefuse(w, r, http.StatusNotFound, "bus accepts no leaf node connections, nor MQTT ones without an mqtt block")
		return
	}
	if status, why := wsRequestProblem(r); status != 0 {
		s.wsRefuse(w, r, status, why)
		return
	}
	if err := s.wsCheckOrigin(r); err != nil {
		s.wsRefuse(w, r, http.StatusForbidden, "origin not allowed: "+err.Error())
		return
	}
	for k, v := range s.opts.WebSocket.Headers {
		w.Header().Set(k, v)
	}
	mode := websocket.CompressionDisabled
	if s.opts.WebSocket.Compression {
		mode = websocket.CompressionNoContextTakeover
	}
	// The origin is checked above, by the reference's rules; the
	// library's own (same host only) would refuse what they allow.
	var protocols []string
	if isMQTT {
		protocols = []string{wsMQTTProtocol}
	}
	wc, err := websocket.Accept(wsSmallBuffers{w}, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: mode, Subprotocols: protocols})
	if err != nil {
		// Accept has answered the request (400, 426 …).
		s.log.Debug("websocket handshake failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	if sock, ok := r.Context().Value(wsSocketKey{}).(net.Conn); ok {
		_ = sock.SetDeadline(time.Time{}) // the handshake's; the connection has its own timers now
	}
	nc := websocket.NetConn(context.Background(), wc, websocket.MessageBinary)
	// NetConn lifts the read limit; set it after.
	wc.SetReadLimit(wsMaxMessage(s.liveOpts().MaxPayload))
	ws := &wsConn{Conn: nc, ws: wc}
	c := newConn(s, ws, s.nextID.Add(1))
	ws.reason = c.closeReason
	c.ws = true
	c.wsCookies = s.opts.WebSocket.cookies(r)
	if isMQTT {
		c.mqtt = newMQTTSession(s.liveOpts())
		c.out.mqtt = true
	}
	s.admit(c)
}

// wsRequestProblem checks the upgrade request as RFC 6455 4.2.1 and the
// reference do, so that a bad one gets the reference's status (the
// library would answer 426 where the reference answers 400), or 0.
func wsRequestProblem(r *http.Request) (int, string) {
	switch {
	case r.Method != http.MethodGet:
		return http.StatusMethodNotAllowed, "request method must be GET"
	case r.Host == "":
		return http.StatusBadRequest, "'Host' missing in request"
	case !wsHeaderHas(r.Header, "Upgrade", "websocket"):
		return http.StatusBadRequest, "invalid value for header 'Upgrade'"
	case !wsHeaderHas(r.Header, "Connection", "Upgrade"):
		return http.StatusBadRequest, "invalid value for header 'Connection'"
	case r.Header.Get("Sec-WebSocket-Key") == "":
		return http.StatusBadRequest, "key missing"
	}
	if key, err := base64.StdEncoding.DecodeString(r.Header.Get("Sec-WebSocket-Key")); err != nil || len(key) != 16 {
		return http.StatusBadRequest, "invalid websocket key"
	}
	if !wsHeaderHas(r.Header, "Sec-WebSocket-Version", "13") {
		return http.StatusBadRequest, "invalid version"
	}
	return 0, ""
}

// wsHeaderHas says a comma-separated header holds token, in any case.
func wsHeaderHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// wsConn is the WebSocket stream with a close that finishes the closing
// handshake before anything else. NetConn's own Close first cancels the
// context a blocked Read waits on, which makes the library drop the
// socket at once, racing the close frame and the last -ERR: a client
// then sees a reset instead of "Authorization Violation". reason is the
// connection's close reason, for the close frame's status and text.
type wsConn struct {
	net.Conn
	ws     *websocket.Conn
	reason func() string
	// sock, when set, is the socket under a stream bus dialed, whose
	// addresses the stream does not know.
	sock net.Conn
}

func (w *wsConn) RemoteAddr() net.Addr {
	if w.sock != nil {
		return w.sock.RemoteAddr()
	}
	return w.Conn.RemoteAddr()
}

func (w *wsConn) LocalAddr() net.Addr {
	if w.sock != nil {
		return w.sock.LocalAddr()
	}
	return w.Conn.LocalAddr()
}

// closeReason is why the connection closed, "" while it is open.
func (c *conn) closeReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reason
}

func (w *wsConn) Close() error {
	reason := ""
	if w.reason != nil {
		reason = w.reason()
	}
	code := wsCloseStatus(reason)
	if len(reason) > wsMaxCloseReason {
		reason = reason[:wsMaxCloseReason]
	}
	err := w.ws.Close(code, reason)
	_ = w.Conn.Close() // stops NetConn's deadline timers
	return err
}

// wsMaxCloseReason fits a close frame's text in a control frame's 125
// bytes beside the status.
const wsMaxCloseReason = 123

// wsCloseStatus is the close frame's status for a close reason, as the
// reference chooses it.
func wsCloseStatus(reason string) websocket.StatusCode {
	switch {
	case reason == "" || reason == "Client Closed":
		return websocket.StatusNormalClosure
	case reason == errAuthViolation.text, reason == errAuthTimeout.text, strings.HasPrefix(reason, "Slow Consumer"),
		reason == errMaxConnections.text, reason == errMaxControlLine.text, reason == errMaxSubscriptions.text:
		return websocket.StatusPolicyViolation
	case reason == errMaxPayload.text:
		return websocket.StatusMessageTooBig
	case reason == "Server Shutdown", reason == "Stale Connection", strings.HasPrefix(reason, "Read Error"),
		strings.HasPrefix(reason, "Write Error"):
		return websocket.StatusGoingAway
	case reason == "Protocol Violation", strings.HasPrefix(reason, "Protocol Error"), reason == errUnknownOp.text,
		reason == errBadClientProtocol.text:
		return websocket.StatusProtocolError
	}
	return websocket.StatusInternalError
}

// wsRefuse answers a handshake the reference would refuse, with its
// status and Sec-WebSocket-Version header.
func (s *Server) wsRefuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	s.log.Warn("websocket handshake refused", "remote", r.RemoteAddr, "reason", why)
	w.Header().Set("Sec-WebSocket-Version", "13")
	http.Error(w, http.StatusText(status), status)
}

// wsCheckOrigin applies SameOrigin and AllowedOrigins to a browser's
// request; a request without Origin is not a browser's and passes.
func (s *Server) wsCheckOrigin(r *http.Request) error {
	o := s.opts.WebSocket
	if !o.SameOrigin && len(o.AllowedOrigins) == 0 {
		return nil
	}
	raw := r.Header.Get("Origin")
	if raw == "" {
		raw = r.Header.Get("Sec-WebSocket-Origin")
	}
	if raw == "" {
		return nil
	}
	org, err := parseOrigin(raw)
	if err != nil {
		return err
	}
	if o.SameOrigin {
		tls := r.TLS != nil
		host, port, err := hostPort(r.Host, tls)
		if err != nil {
			return err
		}
		scheme := "http"
		if tls {
			scheme = "https"
		}
		if org != (origin{scheme, host, port}) {
			return errors.New("not same origin")
		}
	}
	if len(o.AllowedOrigins) > 0 && !s.ws.allowed[org] {
		return errors.New("not in the allowed list")
	}
	return nil
}

// WebSocketAddr is the WebSocket listener's address, or nil when it is
// off or before Start.
func (s *Server) WebSocketAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ws == nil {
		return nil
	}
	return s.ws.ln.Addr()
}

// wsVarz is /varz's websocket section: the listener's settings and the
// port it bound.
func (s *Server) wsVarz() monitor.WebSocketVarz {
	o := s.opts.WebSocket
	if !o.enabled() {
		return monitor.WebSocketVarz{}
	}
	v := monitor.WebSocketVarz{
		Host: o.Host, Port: o.Port, Advertise: o.Advertise, HandshakeTimeout: o.HandshakeTimeout,
		NoTLS: o.NoTLS, SameOrigin: o.SameOrigin, AllowedOrigins: o.AllowedOrigins, Compression: o.Compression,
		NoAuthUser: o.NoAuthUser, AuthTimeout: o.Authorization.Timeout.Seconds(),
	}
	if a, ok := s.WebSocketAddr().(*net.TCPAddr); ok {
		v.Port = a.Port
	}
	return v
}

// stopWebSocket closes the listener and the sockets still in their
// handshake; upgraded connections are closed with the others.
func (s *Server) stopWebSocket() {
	if s.ws != nil {
		_ = s.ws.http.Close()
		s.ws.sockets.Wait()
		s.ws.handlers.Wait()
	}
}

// wsErrorLog sends net/http's complaints (bad requests, TLS handshake
// errors) to the server's logger at debug level: they are the client's.
type wsErrorLog struct{ log *slog.Logger }

func (l wsErrorLog) Write(p []byte) (int, error) {
	l.log.Debug("websocket: " + strings.TrimSpace(string(p)))
	return len(p), nil
}
