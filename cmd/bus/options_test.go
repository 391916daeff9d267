package main

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

// conf cannot import server, so this pins its defaults to the server's.
func TestDefaultConfigMapsToServerDefaults(t *testing.T) {
	t.Parallel()
	got := options(conf.Default(), nil).WithDefaults()
	want := server.Options{Port: server.DefaultPort, HTTPPort: server.DefaultHTTPPort, JetStream: true}.WithDefaults()
	got.Logger, want.Logger = nil, nil // WithDefaults makes a new discard logger each time
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options(conf.Default()):\n got %+v\nwant %+v", got, want)
	}
}

func TestOptionsMapsEveryField(t *testing.T) {
	t.Parallel()
	cfg := conf.Config{
		Host: "127.0.0.1", Port: -1, HTTPPort: -1, ServerName: "east", StoreDir: "/data",
		MaxPayload: 2 << 20, MaxControlLine: 8192, MaxConnections: 10, MaxSubscriptions: 20,
		MaxPending: 32 << 20, PingInterval: 7, MaxPingsOut: 3, WriteDeadline: 9, HTTPAuth: true,
	}
	log := slog.New(slog.DiscardHandler)
	got := options(cfg, log)
	want := server.Options{
		Host: "127.0.0.1", Port: 0, HTTPPort: -1, ServerName: "east", StoreDir: "/data",
		MaxPayload: 2 << 20, MaxControlLine: 8192, MaxConnections: 10, MaxSubscriptions: 20,
		MaxPending: 32 << 20, PingInterval: 7, MaxPingsOut: 3, WriteDeadline: 9, HTTPAuth: true, Logger: log,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options:\n got %+v\nwant %+v", got, want)
	}
}

func TestOptionsMapsAuthorization(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	cfg.NoAuthUser = "guest"
	cfg.Authorization = &conf.Authorization{
		Timeout:              3,
		ReferenceStoredReads: true,
		DefaultPermissions:   &conf.Permissions{Publish: &conf.SubjectPermission{Deny: []string{"x"}}},
		Users: []conf.User{
			{Name: "guest", Password: "g"},
			{Nkey: "UABC", Permissions: &conf.Permissions{
				Publish:   &conf.SubjectPermission{Allow: []string{}},
				Subscribe: &conf.SubjectPermission{Allow: []string{"a"}, Deny: []string{"b q"}},
				Responses: &conf.ResponsePermission{MaxMsgs: 2, Expires: 5},
			}},
		},
	}
	got := options(cfg, nil).Authorization
	want := server.Authorization{
		NoAuthUser: "guest", Timeout: 3, ReferenceStoredReads: true,
		DefaultPermissions: &server.Permissions{Publish: &server.SubjectPermission{Deny: []string{"x"}}},
		Users: []server.User{
			{Name: "guest", Password: "g"},
			{Nkey: "UABC", Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: []string{}},
				Subscribe: &server.SubjectPermission{Allow: []string{"a"}, Deny: []string{"b q"}},
				Responses: &server.ResponsePermission{MaxMsgs: 2, Expires: 5},
			}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("authorization:\n got %+v\nwant %+v", got, want)
	}
	// A token and a single user map too.
	cfg.Authorization = &conf.Authorization{Token: "t"}
	cfg.NoAuthUser = ""
	if got := options(cfg, nil).Authorization; !reflect.DeepEqual(got, server.Authorization{Token: "t"}) {
		t.Errorf("token: got %+v", got)
	}
}

func TestOptionsMapsTLS(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	cfg.HTTPSPort = 8443
	cfg.TLS = &conf.TLS{CertFile: "c", KeyFile: "k", CAFile: "ca", Verify: true, VerifyAndMap: true, Timeout: 3,
		HandshakeFirst: true, HandshakeFirstFallback: 4, MinVersion: "1.3", CipherSuites: []string{"s"}, CurvePreferences: []string{"X25519"}}
	got := options(cfg, nil)
	want := server.TLSOptions{CertFile: "c", KeyFile: "k", CAFile: "ca", Verify: true, VerifyAndMap: true, Timeout: 3,
		HandshakeFirst: true, HandshakeFirstFallback: 4, MinVersion: "1.3", CipherSuites: []string{"s"}, CurvePreferences: []string{"X25519"}}
	if got.HTTPSPort != 8443 || !reflect.DeepEqual(got.TLS, want) {
		t.Errorf("tls: got %d %+v", got.HTTPSPort, got.TLS)
	}
}

func TestPlainSecretsAreNoticed(t *testing.T) {
	t.Parallel()
	const hash = "$2a$04$abcdefghijklmnopqrstuu5bmdQo8qg1sXhR0wvJ7f0K3z8lcX2O."
	for _, tc := range []struct {
		auth server.Authorization
		want bool
	}{
		{server.Authorization{}, false},
		{server.Authorization{Token: "t"}, true},
		{server.Authorization{Token: hash}, false},
		{server.Authorization{User: "u", Password: hash}, false},
		{server.Authorization{Users: []server.User{{Name: "a", Password: hash}, {Name: "b", Password: "b"}}}, true},
		{server.Authorization{Users: []server.User{{Nkey: "UABC"}}}, false},
	} {
		if got := plainSecrets(tc.auth); got != tc.want {
			t.Errorf("plainSecrets(%+v) = %v, want %v", tc.auth, got, tc.want)
		}
	}
}

func TestOptionsMapsLeafNodes(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	if got := options(cfg, nil).LeafNodes; !reflect.DeepEqual(got, server.LeafNodeOptions{}) {
		t.Errorf("no leafnodes block: got %+v", got)
	}
	cfg.LeafNodes = &conf.LeafNodes{Reconnect: 2, Remotes: []conf.LeafRemote{
		{URLs: []string{"nats://a:1"}, NoRandomize: true, Credentials: "x.creds", Account: "$G",
			DenyImports: []string{"i"}, DenyExports: []string{"e"}, DialTimeout: 3, FirstInfoTimeout: 4,
			TLS: &conf.LeafTLS{CAFile: "ca", CertFile: "c", KeyFile: "k", Insecure: true, Timeout: 5}},
		{URLs: []string{"nats://off:1"}, Disabled: true},
		{URLs: []string{"tls://b:2", "tls://c:3"}, Nkey: "SU…"},
		{URLs: []string{"wss://hub:443/nats"}, WSCompression: true, WSNoMasking: true},
	}}
	got := options(cfg, nil).LeafNodes
	want := server.LeafNodeOptions{ReconnectInterval: 2, Remotes: []server.LeafRemote{
		{URLs: []string{"nats://a:1"}, NoRandomize: true, Credentials: "x.creds", Account: "$G",
			DenyImports: []string{"i"}, DenyExports: []string{"e"}, DialTimeout: 3, FirstInfoTimeout: 4,
			TLS: &server.LeafTLS{CAFile: "ca", CertFile: "c", KeyFile: "k", InsecureSkipVerify: true, Timeout: 5}},
		{URLs: []string{"tls://b:2", "tls://c:3"}, Nkey: "SU…"},
		{URLs: []string{"wss://hub:443/nats"}, WebSocketCompression: true, WebSocketNoMasking: true},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("leafnodes:\n got %+v\nwant %+v", got, want)
	}
}

// A leafnodes block bus cannot act on exits 2 before anything listens,
// naming the key inside the block.
func TestLeafNodesErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content, want string }{
		{"bad url", "leafnodes:\n  remotes: [{url: \"http://hub:7422\"}]\n", `conf: leafnodes.remotes[0].url: "http://hub:7422" needs the scheme`},
		{"hub side", "leafnodes:\n  port: 7422\n", "conf: leafnodes.port: bus is a leaf, not a hub"},
		{"unknown key", "leafnodes:\n  remotes: [{url: \"nats://hub\", acount: $G}]\n", `conf: unknown key "leafnodes.remotes[0].acount"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := runBus(t, nil, "serve", "--port", "-1", "--http-port", "0", "--config", writeFile(t, "bus.yaml", tc.content))
			stderr := p.stderr.String()
			if p.code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", p.code, stderr, tc.want)
			}
		})
	}
}

func TestOptionsMapsWebSocket(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	if got := options(cfg, nil).WebSocket; !reflect.DeepEqual(got, server.WebSocketOptions{}) {
		t.Errorf("no block: %+v", got)
	}
	cfg.WebSocket = &conf.WebSocket{
		Host: "0.0.0.0", Port: 8443, Advertise: "ws.example.com:443", TLS: &conf.TLS{CertFile: "c", KeyFile: "k"},
		SameOrigin: true, AllowedOrigins: []string{"https://a"}, Compression: true, HandshakeTimeout: 3,
	}
	want := server.WebSocketOptions{
		Host: "0.0.0.0", Port: 8443, Advertise: "ws.example.com:443", TLS: server.TLSOptions{CertFile: "c", KeyFile: "k"},
		SameOrigin: true, AllowedOrigins: []string{"https://a"}, Compression: true, HandshakeTimeout: 3,
	}
	if got := options(cfg, nil).WebSocket; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// The resolver block maps to server.Resolver key for key; MEMORY to none.
func TestOptionsMapsResolver(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	cfg.Operator = &conf.Operators{JWTs: []string{"eyJ.op.sig"}}
	cfg.Resolver = &conf.Resolver{Type: conf.ResolverFull, Dir: "/jwt", AllowDelete: true, HardDelete: true, Limit: 9, Interval: 3, Timeout: 4}
	want := &server.Resolver{Type: server.ResolverFull, Dir: "/jwt", AllowDelete: true, HardDelete: true, Limit: 9, Interval: 3, Timeout: 4}
	if got := options(cfg, nil).Operator.Resolver; !reflect.DeepEqual(got, want) {
		t.Errorf("resolver %+v, want %+v", got, want)
	}
	cfg.Resolver = &conf.Resolver{Type: conf.ResolverCache, Dir: "/jwt", TTL: 5}
	if got := options(cfg, nil).Operator.Resolver; got == nil || got.Type != server.ResolverCache || got.TTL != 5 {
		t.Errorf("cache resolver %+v", got)
	}
	cfg.Resolver = &conf.Resolver{Type: conf.ResolverMemory}
	if got := options(cfg, nil).Operator.Resolver; got != nil {
		t.Errorf("MEMORY maps to %+v, want none", got)
	}
}
