package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/coder/websocket"
)

// Leaf links over WebSocket: a remote whose URLs are ws:// or wss://
// reaches the hub's websocket listener (nats-server's websocket block)
// instead of its leafnode port, for networks where only HTTP(S) gets
// through. The upgrade asks for the path /leafnode, which tells the hub
// the peer is a leaf and not a client; after it the link is the same
// leaf protocol, one binary WebSocket message per write, exactly as over
// TCP. github.com/coder/websocket is the frame layer, as on the
// listener (ws.go).
//
// ws_compression offers permessage-deflate without context takeover,
// the only mode the reference accepts; a hub that declines it leaves the
// link uncompressed, as the reference's leaf does. ws_no_masking is
// accepted but bus masks its frames anyway: its frame layer always does,
// as RFC 6455 requires of a client, so it does not ask the hub for
// unmasked frames (the reference's leaf masks too when a hub declines).

// isWebSocketURL says u is a ws:// or wss:// remote.
func isWebSocketURL(u *url.URL) bool { return u.Scheme == "ws" || u.Scheme == "wss" }

// wsLeafMaxMessage bounds one message from the hub: a hub writes what it
// has pending in one message, and its pending bytes are at most 64 MiB
// by default, plus one more message.
const wsLeafMaxMessage = 72 << 20

// dialWebSocket opens a ws:// or wss:// link up to the hub's INFO. TLS
// is on for wss:// or when the remote has a tls block, as in the
// reference; the hub's INFO comes inside the upgraded stream, so there
// is no TLS upgrade after it. raw and nc are the same WebSocket stream
// (or nc that stream with bytes read ahead).
func (l *leafLink) dialWebSocket(u *url.URL) (raw, nc net.Conn, info leafInfo, err error) {
	r := &l.remote
	target := url.URL{Scheme: "http", Host: u.Host, Path: path.Join("/", u.Path, wsLeafPath)}
	var sock net.Conn // the TCP socket, for the link's addresses
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: r.DialTimeout}
			c, err := d.DialContext(ctx, network, addr)
			sock = c
			return c, err
		},
		DisableKeepAlives: true,
		Proxy:             nil, // the remote's URL is dialed as it is
	}
	if u.Scheme == "wss" || r.TLS != nil {
		cfg, timeout, err := l.tlsConfig(u)
		if err != nil {
			return nil, nil, info, fmt.Errorf("%s: tls: %w", u.Redacted(), err)
		}
		target.Scheme = "https"
		tr.TLSClientConfig, tr.TLSHandshakeTimeout = cfg, timeout
	}
	defer tr.CloseIdleConnections()
	mode := websocket.CompressionDisabled
	if r.WebSocketCompression {
		mode = websocket.CompressionNoContextTakeover
	}
	// The dial, TLS and the upgrade together; the INFO after has its own
	// bound.
	ctx, cancel := context.WithTimeout(context.Background(), r.DialTimeout+r.FirstInfoTimeout)
	defer cancel()
	wc, resp, err := websocket.Dial(ctx, target.String(), &websocket.DialOptions{
		HTTPClient:      &http.Client{Transport: tr},
		CompressionMode: mode,
	})
	if err != nil {
		return nil, nil, info, fmt.Errorf("%s: websocket: %w", u.Redacted(), err)
	}
	wc.SetReadLimit(wsLeafMaxMessage)
	ws := &wsConn{Conn: websocket.NetConn(context.Background(), wc, websocket.MessageBinary), ws: wc, sock: sock}
	l.srv.log.Debug("leafnode websocket upgraded", "remote", u.Redacted(),
		"compression", strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate"))
	info, rest, err := readLeafInfo(ws, r.FirstInfoTimeout)
	if err != nil {
		_ = ws.Close()
		return nil, nil, info, fmt.Errorf("%s: %w", u.Redacted(), err)
	}
	nc = ws
	if rest != nil {
		nc = rest
	}
	return ws, nc, info, nil
}
