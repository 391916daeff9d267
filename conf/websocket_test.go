package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The websocket block loads with nats-server's keys, from a nats-server
// file and from YAML alike.
func TestLoadWebSocketBlock(t *testing.T) {
	t.Parallel()
	want := &WebSocket{
		Host: "0.0.0.0", Port: 8443, Advertise: "ws.example.com:443",
		TLS:        &TLS{CertFile: "c.pem", KeyFile: "k.pem"},
		SameOrigin: true, AllowedOrigins: []string{"https://app.example.com", "http://localhost:8080"},
		Compression: true, HandshakeTimeout: 3 * time.Second,
	}
	for name, content := range map[string]string{
		"nats.conf": `
websocket {
  listen: "0.0.0.0:8443"
  advertise: "ws.example.com:443"
  tls { cert_file: c.pem, key_file: k.pem }
  same_origin: true
  allowed_origins: ["https://app.example.com", "http://localhost:8080"]
  compression: true
  handshake_timeout: "3s"
  no_auth_user: ""
  jwt_cookie: ""
}
`,
		"bus.yaml": `
ws:
  host: 0.0.0.0
  port: 8443
  advertise: ws.example.com:443
  tls: {cert_file: c.pem, key_file: k.pem}
  same_origin: true
  allowed_origins: ["https://app.example.com", "http://localhost:8080"]
  compress: true
  handshake_timeout: 3s
`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeConfig(t, name, content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.WebSocket, want) {
				t.Errorf("got %+v\nwant %+v", cfg.WebSocket, want)
			}
		})
	}
	cfg, err := Load(writeConfig(t, "nats.conf", `
websocket {
  no_tls: true
  ping_interval: "30s"
  headers { "Strict-Transport-Security": "max-age=31536000", "X-Frame-Options": "DENY" }
  authorization { username: web, pass: s3cr3t, timeout: 1.5 }
  no_auth_user: guest
  username_cookie: u, password_cookie: p, token_cookie: t
}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	auth := &WebSocket{Port: DefaultWebSocketPort, NoTLS: true, PingInterval: 30 * time.Second,
		// Keys come lower-cased, as every key of the file; HTTP header
		// names are case-insensitive, and the server writes them
		// canonically.
		Headers:       map[string]string{"strict-transport-security": "max-age=31536000", "x-frame-options": "DENY"},
		Authorization: &WebSocketAuth{User: "web", Password: "s3cr3t", Timeout: 1500 * time.Millisecond},
		NoAuthUser:    "guest", UserCookie: "u", PassCookie: "p", TokenCookie: "t"}
	if !reflect.DeepEqual(cfg.WebSocket, auth) {
		t.Errorf("the block's auth, cookies, headers and ping:\n got %+v\nwant %+v", cfg.WebSocket, auth)
	}
	cfg, err = Load(writeConfig(t, "nats.conf", "websocket { no_tls: true }"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WebSocket.Port != DefaultWebSocketPort || !cfg.WebSocket.NoTLS {
		t.Errorf("a block without port: %+v", cfg.WebSocket)
	}
}

// Bad values and the keys bus does not act on are refused, naming the
// key.
func TestWebSocketBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string // inside websocket { no_tls: true, ... }
		wantKey    string
		wantErr    error
		wantMsg    string
	}{
		{"port_range", "port: 70000", "websocket.port", ErrBadValue, "not a port"},
		{"listen_bad", `listen: "nowhere"`, "websocket.listen", ErrBadValue, "host:port"},
		{"origin_scheme", `allowed_origins: ["ftp://x"]`, "websocket.allowed_origins", ErrBadValue, "http:// or https://"},
		{"origin_relative", `allowed_origins: "app.example.com"`, "websocket.allowed_origins", ErrBadValue, "absolute"},
		{"timeout", "handshake_timeout: soon", "websocket.handshake_timeout", ErrBadValue, "not a duration"},
		{"tls_and_no_tls", "tls { cert_file: c, key_file: k }", "websocket.no_tls", ErrBadValue, "contradicts"},
		{"unknown", "compresion: true", "websocket.compresion", ErrUnknownKey, `did you mean "compression"?`},
		{"authorization_user_and_token", "authorization { user: a, token: t }", "websocket.authorization", ErrBadValue, "user/pass and token"},
		{"authorization_users", "authorization { users: [] }", "websocket.authorization.users", ErrUnknownKey, ""},
		{"headers_not_strings", `headers { "X-A": 1 }`, "websocket.headers.x-a", ErrBadValue, "not a header value"},
		{"ping_interval", "ping_interval: soon", "websocket.ping_interval", ErrBadValue, "not a duration"},
		{"jwt_cookie", "jwt_cookie: jwt", "websocket.jwt_cookie", ErrOutOfRange, "JWT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := "no_tls: true\n" + tc.body
			if strings.HasPrefix(tc.body, "no_tls") {
				body = tc.body
			}
			_, err := Load(writeConfig(t, "nats.conf", "websocket {\n"+body+"\n}\n"), nil)
			errs := keyErrors(t, err)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %v", len(errs), err)
			}
			ke := errs[0]
			if ke.Key != tc.wantKey || !errors.Is(ke, tc.wantErr) || !strings.Contains(ke.Error(), tc.wantMsg) {
				t.Errorf("got %q (key %q), want key %q, %v, containing %q", ke.Error(), ke.Key, tc.wantKey, tc.wantErr, tc.wantMsg)
			}
		})
	}
}
