package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultWebSocketHandshakeTimeout bounds the HTTP upgrade when
// WebSocketOptions.HandshakeTimeout is 0: a socket that has not finished
// its request by then is dropped before it costs more than a goroutine.
const DefaultWebSocketHandshakeTimeout = 2 * time.Second

// wsMaxHandshakeBytes bounds the upgrade request's line and headers. A
// browser's request with a few cookies fits many times over.
const wsMaxHandshakeBytes = 16 * 1024

// WebSocketOptions is the websocket block: a second listener whose clients
// speak the same NATS protocol inside WebSocket messages, with the same
// users, permissions and subject space as the client port (ws.go).
type WebSocketOptions struct {
	// Port is the listener's port: 0 leaves WebSocket off, -1 picks a free
	// port (see Server.WebSocketAddr).
	Port int
	Host string
	// Advertise is the host:port WebSocket clients are told to reach the
	// server at, for /varz; "" is the listener's own.
	Advertise string
	// TLS is the listener's certificate (wss://). As in the reference a
	// listener without TLS must say NoTLS, for a TLS-terminating proxy in
	// front or for tests.
	TLS   TLSOptions
	NoTLS bool
	// SameOrigin refuses a browser's upgrade whose Origin is not the
	// scheme, host and port the request was sent to; AllowedOrigins
	// refuses one whose Origin is not in the list (http or https URLs).
	// Either refusal is 403. A request without Origin (not a browser) is
	// never refused for it, as in the reference.
	SameOrigin     bool
	AllowedOrigins []string
	// Compression offers permessage-deflate (without context takeover) to
	// clients that ask for it.
	Compression bool
	// HandshakeTimeout bounds the upgrade; 0 means
	// DefaultWebSocketHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Headers are added to every upgrade's response (headers).
	Headers map[string]string
	// PingInterval, when set, is how often WebSocket clients are pinged,
	// in place of Options.PingInterval.
	PingInterval time.Duration
	// Authorization and NoAuthUser override the top-level ones for
	// WebSocket clients; UserCookie, PassCookie, TokenCookie and
	// JWTCookie name the upgrade's cookies that stand in for CONNECT's
	// credentials (wsauth.go). JWTCookie needs operator mode: the
	// cookie's user JWT is verified as CONNECT's would be, so a JWT
	// that is not a bearer token still needs the nonce signed.
	Authorization                                  WebSocketAuth
	NoAuthUser                                     string
	UserCookie, PassCookie, TokenCookie, JWTCookie string
}

// enabled says the listener is configured.
func (w WebSocketOptions) enabled() bool { return w.Port != 0 }

func (w WebSocketOptions) withDefaults() WebSocketOptions {
	if w.HandshakeTimeout == 0 {
		w.HandshakeTimeout = DefaultWebSocketHandshakeTimeout
	}
	return w
}

// validate reports the first setting that cannot work, in the
// reference's words where it has them.
func (w WebSocketOptions) validate() error {
	if !w.enabled() {
		return nil
	}
	switch {
	case w.Port < -1 || w.Port > 65535:
		return fmt.Errorf("server: websocket port %d out of range -1..65535", w.Port)
	case !w.TLS.enabled() && !w.NoTLS:
		return errors.New("server: websocket requires TLS configuration (or no_tls for a TLS-terminating proxy)")
	case w.TLS.enabled() && w.NoTLS:
		return errors.New("server: websocket no_tls contradicts its tls block")
	case w.HandshakeTimeout < 0:
		return errors.New("server: websocket handshake timeout must not be negative")
	case w.TLS.VerifyAndMap:
		return errors.New("server: websocket tls verify_and_map is not supported")
	case w.PingInterval < 0:
		return errors.New("server: websocket ping interval must not be negative")
	}
	for k, v := range w.Headers {
		if !validHeader(k, v) {
			return fmt.Errorf("server: websocket header %q: not a valid HTTP header name and value", k)
		}
		switch http.CanonicalHeaderKey(k) {
		case "Upgrade", "Connection", "Sec-Websocket-Accept", "Sec-Websocket-Extensions", "Sec-Websocket-Protocol":
			return fmt.Errorf("server: websocket header %q is the handshake's own", k)
		}
	}
	for _, o := range w.AllowedOrigins {
		if _, err := parseOrigin(o); err != nil {
			return fmt.Errorf("server: websocket allowed origin %q: %w", o, err)
		}
	}
	if w.TLS.enabled() {
		return w.TLS.validate()
	}
	return nil
}

// validHeader says k: v can be written as a response header: k an HTTP
// token, v without control characters but tab.
func validHeader(k, v string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	for _, r := range v {
		if r < ' ' && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}

// origin is an Origin reduced to what is compared: scheme, lower-case
// host and port (the scheme's default when absent).
type origin struct{ scheme, host, port string }

// parseOrigin parses an allowed origin or a request's Origin header.
func parseOrigin(s string) (origin, error) {
	u, err := url.ParseRequestURI(s)
	if err != nil {
		return origin{}, err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return origin{}, errors.New("must be an absolute http or https URL")
	}
	if u.Host == "" {
		return origin{}, errors.New("host is required")
	}
	host, port, err := hostPort(u.Host, scheme == "https")
	if err != nil {
		return origin{}, err
	}
	return origin{scheme, host, port}, nil
}

// hostPort splits host[:port], giving the scheme's default port.
func hostPort(hp string, tls bool) (string, string, error) {
	host, port, err := net.SplitHostPort(hp)
	var ae *net.AddrError
	if errors.As(err, &ae) && strings.Contains(ae.Err, "missing port") {
		host, port, err = hp, "80", nil
		if tls {
			port = "443"
		}
	}
	return strings.ToLower(host), port, err
}
