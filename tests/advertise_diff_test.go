package tests

import (
	"net"
	"strconv"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// client_advertise replaces host and port in INFO and /varz as in the
// reference (nats-server's TestServerInfoWithClientAdvertise and
// TestClientAdvertiseConnectURL): "me:1" advertises me:1, a host alone
// the bound client port, and a standalone server lists no connect_urls
// either way (issue 23).
func TestClientAdvertiseMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ advertise, host string }{
		{"me:1", "me"},
		{"nats.example.com", "nats.example.com"},
		{"[::1]:7777", "::1"},
	} {
		t.Run(tc.advertise, func(t *testing.T) {
			t.Parallel()
			b := startBus(t, server.Options{HTTPPort: -1, ClientAdvertise: tc.advertise})
			r := startReferenceWith(t, func(o *natsserver.Options) { o.ClientAdvertise = tc.advertise })
			for _, side := range []struct {
				name, client, http string
				port               int
			}{
				{"bus", b.Addr().String(), b.HTTPAddr().String(), portOf(t, b.Addr().String())},
				{"reference", refAddr(r), r.MonitorAddr().String(), portOf(t, refAddr(r))},
			} {
				wantPort := side.port
				if tc.advertise == "me:1" {
					wantPort = 1
				} else if tc.advertise == "[::1]:7777" {
					wantPort = 7777
				}
				in := info(t, side.client)
				if in["host"] != tc.host || in["port"] != float64(wantPort) {
					t.Errorf("%s: INFO host:port %v:%v, want %s:%d", side.name, in["host"], in["port"], tc.host, wantPort)
				}
				if _, ok := in["connect_urls"]; ok {
					t.Errorf("%s: INFO connect_urls %v on a standalone server", side.name, in["connect_urls"])
				}
				v := varz(t, side.http)
				if v["host"] != tc.host || v["port"] != float64(wantPort) {
					t.Errorf("%s: /varz host:port %v:%v, want %s:%d", side.name, v["host"], v["port"], tc.host, wantPort)
				}
				if _, ok := v["connect_urls"]; ok {
					t.Errorf("%s: /varz connect_urls %v on a standalone server", side.name, v["connect_urls"])
				}
			}
		})
	}
}

// A client_advertise the reference cannot parse stops it at start
// (TestClientAdvertiseErrorOnStartup); bus refuses it in New.
func TestClientAdvertiseInvalidRefused(t *testing.T) {
	t.Parallel()
	if _, err := server.New(server.Options{ClientAdvertise: "addr:::123"}); err == nil {
		t.Fatal("client_advertise addr:::123 accepted")
	}
}

// Reloading client_advertise changes the INFO of connections made after
// it, as the reference's clientAdvertiseOption.
func TestClientAdvertiseReloads(t *testing.T) {
	t.Parallel()
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir()}
	b := startBus(t, opts)
	opts.ClientAdvertise = "edge.example.com:4333"
	if err := b.Reload(opts); err != nil {
		t.Fatal(err)
	}
	if in := info(t, b.Addr().String()); in["host"] != "edge.example.com" || in["port"] != float64(4333) {
		t.Errorf("INFO after reload %v:%v, want edge.example.com:4333", in["host"], in["port"])
	}
}

// portOf is the port of a host:port.
func portOf(t *testing.T, hostPort string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
