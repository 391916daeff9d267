package conf

import (
	"maps"
	"net/url"
	"slices"
	"time"
)

// The websocket key is nats-server's block for its WebSocket listener,
// with its key names and aliases (v2.15.2):
//
//	websocket {
//	  host: 0.0.0.0, port: 443     # or listen: "0.0.0.0:443"
//	  advertise: "ws.example.com:443"
//	  tls { cert_file, key_file, ... }   # or no_tls: true behind a TLS proxy
//	  same_origin: true
//	  allowed_origins: ["https://app.example.com"]
//	  compression: true
//	  handshake_timeout: "2s"
//	  ping_interval: "30s"
//	  headers { "Strict-Transport-Security": "max-age=31536000" }
//	  authorization { user: web, password: s3cr3t, timeout: 2 }  # or token
//	  no_auth_user: guest
//	  user_cookie: nats_user, pass_cookie: nats_pass, token_cookie: nats_token
//	  jwt_cookie: nats_jwt  # operator mode only
//	}
//
// The keys bus does not act on (the tls_ keys it has no certificate
// mapping for) are refused, naming the key, rather than ignored: a config
// that sets them expects what bus would not do. Their off value is
// accepted.

// WebSocket is the websocket block.
type WebSocket struct {
	Host string
	// Port is 0 for nats-server's default when the block is present
	// without one; -1 picks a free port.
	Port             int
	Advertise        string
	TLS              *TLS // nil: NoTLS must be set
	NoTLS            bool
	SameOrigin       bool
	AllowedOrigins   []string
	Compression      bool
	HandshakeTimeout time.Duration // 0: the server's default (2s)
	PingInterval     time.Duration // 0: the top-level ping_interval
	Headers          map[string]string
	// Authorization is the block's own user and password or token,
	// for WebSocket clients in place of the top-level ones.
	Authorization                                  *WebSocketAuth
	NoAuthUser                                     string
	UserCookie, PassCookie, TokenCookie, JWTCookie string
}

// WebSocketAuth is the websocket block's authorization: nats-server's
// simple form, without a users list.
type WebSocketAuth struct {
	User, Password, Token string
	Timeout               time.Duration // 0: the top-level timeout
}

// wsUnsupported are the block's keys bus refuses, with why.
var wsUnsupported = map[string]string{
	"tls_map":          "bus does not map WebSocket client certificates to users",
	"tls_pinned_certs": "bus does not pin WebSocket client certificates",
	"tls_ocsp_peer":    "bus does not check OCSP",
}

// websocket parses the block.
func (p *blockParser) websocket(raw any) *WebSocket {
	m, ok := p.block("", raw)
	if !ok {
		return nil
	}
	known := [][]string{
		{"host", "net"}, {"port"}, {"listen"}, {"advertise"}, {"tls"}, {"no_tls"}, {"same_origin"},
		{"allowed_origins", "allowed_origin", "allow_origins", "allow_origin", "origins", "origin"},
		{"compression", "compress"}, {"handshake_timeout"},
		{"authorization", "authentication"}, {"no_auth_user"}, {"jwt_cookie"}, {"user_cookie", "username_cookie"},
		{"pass_cookie", "password_cookie"}, {"token_cookie"}, {"headers"}, {"ping_interval"},
		{"tls_map"}, {"tls_pinned_certs"}, {"tls_ocsp_peer"},
	}
	f := p.fields("", m, known)
	ws := &WebSocket{}
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, path := f[name], "."+name
		switch name {
		case "host":
			ws.Host = p.str(path, v)
		case "port":
			ws.Port = p.port(path, v)
		case "listen":
			ws.Host, ws.Port = p.listen(path, v)
		case "advertise":
			ws.Advertise = p.str(path, v)
		case "tls":
			var sub blockParser
			ws.TLS = sub.tls(v)
			for _, e := range sub.errs {
				e.path = path + e.path
				p.errs = append(p.errs, e)
			}
		case "no_tls":
			ws.NoTLS = p.boolean(path, v)
		case "same_origin":
			ws.SameOrigin = p.boolean(path, v)
		case "allowed_origins":
			ws.AllowedOrigins = p.origins(path, v)
		case "compression":
			ws.Compression = p.boolean(path, v)
		case "handshake_timeout":
			ws.HandshakeTimeout = p.duration(path, v)
		case "ping_interval":
			ws.PingInterval = p.duration(path, v)
		case "headers":
			ws.Headers = p.headers(path, v)
		case "authorization":
			ws.Authorization = p.wsAuthorization(path, v)
		case "no_auth_user":
			ws.NoAuthUser = p.str(path, v)
		case "user_cookie":
			ws.UserCookie = p.str(path, v)
		case "pass_cookie":
			ws.PassCookie = p.str(path, v)
		case "token_cookie":
			ws.TokenCookie = p.str(path, v)
		case "jwt_cookie":
			ws.JWTCookie = p.str(path, v)
		default:
			if !isOff(v) && v != "" {
				p.errs = append(p.errs, &nestedError{path: path, reason: wsUnsupported[name], err: ErrOutOfRange})
			}
		}
	}
	if _, ok := f["port"]; !ok {
		if _, ok := f["listen"]; !ok {
			ws.Port = DefaultWebSocketPort
		}
	}
	if ws.TLS == nil && !ws.NoTLS {
		p.bad("", "needs a tls block, or no_tls: true behind a TLS-terminating proxy (as nats-server requires)")
	}
	if ws.TLS != nil && ws.NoTLS {
		p.bad(".no_tls", "contradicts the tls block: set one")
	}
	return ws
}

// headers reads the block's extra response headers: a map of strings.
func (p *blockParser) headers(path string, raw any) map[string]string {
	m, ok := p.block(path, raw)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			p.bad(path+"."+k, "%s is not a header value (a string)", describe(v))
			continue
		}
		out[k] = s
	}
	return out
}

// wsAuthorization reads the block's authorization: a user and password
// or a token, and a timeout.
func (p *blockParser) wsAuthorization(path string, raw any) *WebSocketAuth {
	m, ok := p.block(path, raw)
	if !ok {
		return nil
	}
	f := p.fields(path, m, [][]string{{"user", "username"}, {"password", "pass"}, {"token"}, {"timeout"}})
	a := &WebSocketAuth{}
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, fpath := f[name], path+"."+name
		switch name {
		case "user":
			a.User = p.str(fpath, v)
		case "password":
			a.Password = p.str(fpath, v)
		case "token":
			a.Token = p.str(fpath, v)
		case "timeout":
			a.Timeout = p.seconds(fpath, v)
		}
	}
	if a.Token != "" && (a.User != "" || a.Password != "") {
		p.bad(path, "cannot have a user/pass and token")
	}
	return a
}

// DefaultWebSocketPort is the port of a websocket block without one,
// nats-server's default.
const DefaultWebSocketPort = 443

// port reads a listener port: 1..65535, or -1 for a free one.
func (p *blockParser) port(path string, raw any) int {
	n, ok := number(raw)
	if !ok || n < -1 || n == 0 || n > 65535 {
		p.bad(path, "%s is not a port (1..65535, or -1 for a free one)", describe(raw))
		return 0
	}
	return int(n)
}

// listen reads host:port.
func (p *blockParser) listen(path string, raw any) (string, int) {
	s := p.str(path, raw)
	if s == "" {
		return "", 0
	}
	u, err := url.Parse("//" + s)
	if err != nil || u.Port() == "" {
		p.bad(path, "%q is not host:port", s)
		return "", 0
	}
	return u.Hostname(), p.port(path, u.Port())
}

// origins reads allowed_origins: absolute http or https URLs.
func (p *blockParser) origins(path string, raw any) []string {
	list := p.strings(path, raw)
	for _, o := range list {
		u, err := url.ParseRequestURI(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.bad(path, "%q is not an absolute http:// or https:// origin", o)
		}
	}
	return list
}

// webSocketValue is the websocket key.
type webSocketValue struct{ p **WebSocket }

func (v webSocketValue) set(raw any) error {
	var bp blockParser
	ws := bp.websocket(raw)
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = ws
	return nil
}

func (v webSocketValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v webSocketValue) kind() string { return "block" }
