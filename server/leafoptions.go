package server

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/bus-dev/bus/subjects"
)

// Leaf-node defaults, as in the reference.
const (
	// DefaultLeafPort is where a hub listens for leaf nodes.
	DefaultLeafPort = 7422
	// DefaultLeafReconnect is the first wait before dialing a remote
	// again; bus doubles it up to MaxLeafReconnect, with jitter.
	DefaultLeafReconnect = time.Second
	// MaxLeafReconnect bounds the wait between dials of a remote.
	MaxLeafReconnect = 30 * time.Second
	// DefaultLeafDialTimeout bounds one dial.
	DefaultLeafDialTimeout = 2 * time.Second
	// DefaultLeafFirstInfoTimeout bounds the wait for the hub's INFO.
	DefaultLeafFirstInfoTimeout = time.Second
	// leafLoopDelay is how long a remote rests after a loop was found
	// (its loop-detection subject came back), as in the reference.
	leafLoopDelay = 30 * time.Second
)

// LeafNodeOptions is the leafnodes block: the hubs bus joins as a leaf
// node (nats-server's leafnodes { remotes [...] }).
type LeafNodeOptions struct {
	Remotes []LeafRemote
	// ReconnectInterval is the first wait before a lost or refused
	// remote is dialed again; 0 means DefaultLeafReconnect.
	ReconnectInterval time.Duration
}

// LeafRemote is one hub to join: bus dials one of URLs, authenticates
// with what it is given and exchanges interest and messages of the
// global account with the hub's account of those credentials.
type LeafRemote struct {
	// URLs are tried in turn (shuffled unless NoRandomize), each
	// "nats://host:port" or "tls://host:port", the port 7422 when
	// absent. User and password (or a lone token) in a URL are sent in
	// CONNECT. Those the hub advertises are added while connected.
	URLs        []string
	NoRandomize bool
	// Credentials is a .creds file (a user JWT and its nkey seed) whose
	// seed signs the hub's nonce.
	Credentials string
	// Nkey is a user nkey seed ("SU…") that signs the hub's nonce.
	Nkey string
	// TLS, when set or when a URL is tls://, makes the link TLS;
	// CAFile verifies the hub, CertFile and KeyFile are bus's
	// certificate for hubs that verify leaves.
	TLS *LeafTLS
	// DenyImports are subjects bus does not take from the hub (it never
	// sends interest in them); DenyExports are subjects it never sends.
	DenyImports []string
	DenyExports []string
	// Account is the local account the link is bound to; bus has one
	// account for clients, so it is "" or "$G".
	Account string
	// DialTimeout and FirstInfoTimeout bound a connection attempt; 0
	// means the defaults.
	DialTimeout      time.Duration
	FirstInfoTimeout time.Duration
	// WebSocketCompression offers permessage-deflate on ws:// and wss://
	// URLs (nats-server's ws_compression); WebSocketNoMasking is its
	// ws_no_masking, accepted for its configs: bus masks its frames
	// anyway (leafws.go). Neither does anything on other URLs, as in
	// the reference.
	WebSocketCompression bool
	WebSocketNoMasking   bool
}

// LeafTLS is a remote's tls block.
type LeafTLS struct {
	CAFile   string
	CertFile string
	KeyFile  string
	// ServerName overrides the host name the hub's certificate must name.
	ServerName string
	// InsecureSkipVerify accepts any certificate (tests only).
	InsecureSkipVerify bool
	Timeout            time.Duration // handshake bound; 0: DefaultTLSTimeout
}

func (o LeafNodeOptions) withDefaults() LeafNodeOptions {
	if o.ReconnectInterval == 0 {
		o.ReconnectInterval = DefaultLeafReconnect
	}
	remotes := make([]LeafRemote, len(o.Remotes))
	for i, r := range o.Remotes {
		if r.DialTimeout == 0 {
			r.DialTimeout = DefaultLeafDialTimeout
		}
		if r.FirstInfoTimeout == 0 {
			r.FirstInfoTimeout = DefaultLeafFirstInfoTimeout
		}
		if r.TLS != nil && r.TLS.Timeout == 0 {
			t := *r.TLS
			t.Timeout = DefaultTLSTimeout
			r.TLS = &t
		}
		remotes[i] = r
	}
	o.Remotes = remotes
	return o
}

// validate names the first remote setting that cannot work.
func (o LeafNodeOptions) validate() error {
	if o.ReconnectInterval < 0 {
		return fmt.Errorf("server: leafnodes reconnect interval must not be negative")
	}
	for i, r := range o.Remotes {
		where := fmt.Sprintf("server: leafnodes remote %d", i+1)
		if len(r.URLs) == 0 {
			return fmt.Errorf("%s: no url", where)
		}
		ws := 0
		for _, raw := range r.URLs {
			u, err := parseLeafURL(raw)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if isWebSocketURL(u) {
				ws++
			}
		}
		if ws != 0 && ws != len(r.URLs) {
			return fmt.Errorf("%s: cannot have a mix of websocket and non-websocket urls", where)
		}
		if r.Credentials != "" && r.Nkey != "" {
			return fmt.Errorf("%s: credentials and nkey are exclusive", where)
		}
		if r.Account != "" && r.Account != globalAccount {
			return fmt.Errorf("%s: account %q is not bus's client account %q", where, r.Account, globalAccount)
		}
		for _, list := range [][]string{r.DenyImports, r.DenyExports} {
			for _, s := range list {
				if !subjects.ValidSubject(s) {
					return fmt.Errorf("%s: deny subject %q is not a valid subject", where, s)
				}
			}
		}
		if r.DialTimeout < 0 || r.FirstInfoTimeout < 0 {
			return fmt.Errorf("%s: timeouts must not be negative", where)
		}
		if t := r.TLS; t != nil && (t.CertFile == "") != (t.KeyFile == "") {
			return fmt.Errorf("%s: tls needs both cert_file and key_file, or neither", where)
		}
	}
	return nil
}

// parseLeafURL reads a remote's URL, with port 7422 when it has none.
func parseLeafURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	port := DefaultLeafPort
	switch u.Scheme {
	case "nats", "tls", "nats-leaf":
	case "ws":
		port = 80
	case "wss":
		port = 443
	default:
		return nil, fmt.Errorf("url %q: scheme must be nats://, tls://, ws:// or wss://", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("url %q: no host", raw)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
	}
	return u, nil
}
