package tests

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// startWSHub is a one-node reference hub that accepts leaf nodes on its
// websocket listener (at /leafnode) as well as its leaf port, and its
// ws:// (or wss:// with tlsConfig) URL.
func startWSHub(t *testing.T, compression bool, tlsConfig *tls.Config) (*hubCluster, string) {
	t.Helper()
	var opts *natsserver.Options // the hub writes the port it bound here
	hub := startHubCluster(t, 1, false, func(o *natsserver.Options) {
		opts = o
		o.Websocket = natsserver.WebsocketOpts{Host: "127.0.0.1", Port: -1, NoTLS: tlsConfig == nil,
			TLSConfig: tlsConfig, Compression: compression}
	})
	scheme := "ws"
	if tlsConfig != nil {
		scheme = "wss"
	}
	return hub, scheme + "://127.0.0.1:" + strconv.Itoa(opts.Websocket.Port)
}

// A leaf reaches its hub through the hub's websocket listener, plain,
// compressed (with a hub that offers permessage-deflate, and a payload
// worth compressing), with ws_no_masking, and over wss:// checking the
// hub's certificate: messages cross both ways, as they do for a
// nats-server leaf with the same remote.
func TestLeafOverWebSocket(t *testing.T) {
	ca := newTestCA(t, "ws-hub")
	hubCert, hubKey := ca.serverCert(t)
	hubTLS, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{CertFile: hubCert, KeyFile: hubKey, Timeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("compressible ", 20000) // 260 KB
	cases := []struct {
		name                   string
		hubCompress            bool
		hubTLS                 *tls.Config
		compression, noMasking bool
	}{
		{name: "ws"},
		{name: "ws compressed", hubCompress: true, compression: true},
		{name: "ws compression declined", compression: true},
		{name: "ws no masking", noMasking: true},
		{name: "wss", hubTLS: hubTLS, hubCompress: true, compression: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scenario := func(t *testing.T, join leafJoiner) []string {
				hub, wsURL := startWSHub(t, tc.hubCompress, tc.hubTLS)
				remote := server.LeafRemote{URLs: []string{wsURL}, WebSocketCompression: tc.compression, WebSocketNoMasking: tc.noMasking}
				if tc.hubTLS != nil {
					remote.TLS = &server.LeafTLS{CAFile: ca.file}
				}
				leafURL := join(t, hub, remote)
				onHub, onLeaf := connect(t, hub.clientURL(0)), connect(t, leafURL)
				hubSub, leafSub := subSync(t, onHub, "up.>", ""), subSync(t, onLeaf, "down.>", "")
				awaitRoute(t, onLeaf, hubSub, "up.probe")
				awaitRoute(t, onHub, leafSub, "down.probe")
				for i, body := range []string{"small", big} {
					must(t, onLeaf.Publish(fmt.Sprintf("up.%d", i), []byte(body)))
					must(t, onHub.Publish(fmt.Sprintf("down.%d", i), []byte(body)))
				}
				out := append(drainLeaf(t, "hub", hubSub, 2), drainLeaf(t, "leaf", leafSub, 2)...)
				for i, line := range out {
					out[i] = strings.Replace(line, big, fmt.Sprintf("<%d bytes>", len(big)), 1)
				}
				return out
			}
			refJoin := func(t *testing.T, hub *hubCluster, r server.LeafRemote) string {
				return startReferenceLeafWith(t, hub, r, func(o *natsserver.Options) {
					ro := o.LeafNode.Remotes[0]
					ro.Websocket.Compression, ro.Websocket.NoMasking = r.WebSocketCompression, r.WebSocketNoMasking
					if r.TLS != nil {
						ro.TLS, ro.TLSTimeout, ro.TLSConfig = true, 2, clientTLS(t, ca, "", "")
					}
				}).ClientURL()
			}
			logs := &logCapture{}
			logged := func(t *testing.T, hub *hubCluster, r server.LeafRemote) string {
				return busURL(startBusLeaf(t, hub, server.Options{Logger: slog.New(logs)}, r))
			}
			sameOutcomes(t, scenario(t, refJoin), scenario(t, logged))
			// Compressed only when both sides asked for it.
			want := "compression=" + strconv.FormatBool(tc.compression && tc.hubCompress)
			if !logs.has("leafnode websocket upgraded") || !logs.has(want) {
				t.Errorf("the link's upgrade was not logged with %s", want)
			}
		})
	}
}

// bus's websocket listener is for clients: it accepts no leaf nodes,
// and a bus leaf pointed at it says so and keeps dialing.
func TestLeafOverWebSocketToBusIsRefused(t *testing.T) {
	_, wsURL := startWSBus(t, server.Options{})
	logs := &logCapture{}
	opts := server.Options{Logger: slog.New(logs)}
	opts.LeafNodes.Remotes = []server.LeafRemote{{URLs: []string{wsURL}}}
	startBus(t, opts)
	eventually(t, 10*time.Second, func() bool { return logs.has("404") })
}
