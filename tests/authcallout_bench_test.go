package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/jwt/v2"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// BenchmarkAuthCalloutConnect measures a client's login through the
// callout (request, service, answer, CONNECT done), on bus and on the
// reference, with and without xkey.
func BenchmarkAuthCalloutConnect(b *testing.B) {
	for _, xkey := range []bool{false, true} {
		name := "clear"
		if xkey {
			name = "xkey"
		}
		b.Run(name, func(b *testing.B) {
			w := newCalloutWorld(b, xkey)
			for _, side := range []struct{ name, url string }{
				{"bus", busURL(startBus(b, w.busOptions()))},
				{"reference", startReferenceText(b, w.referenceConfig()).ClientURL()},
			} {
				b.Run(side.name, func(b *testing.B) {
					w.serve(b, side.url, func(*jwt.AuthorizationRequestClaims) decision { return decision{account: "APP"} })
					b.ReportAllocs()
					for b.Loop() {
						nc, err := nats.Connect(side.url, nats.UserInfo("alice", "secret"), nats.NoReconnect())
						if err != nil {
							b.Fatal(err)
						}
						nc.Close()
					}
				})
			}
		})
	}
}

// startReferenceText runs the reference from config text (with the %q
// verb of writeReferenceConfig for its store directory), for benchmarks.
func startReferenceText(tb testing.TB, config string) *natsserver.Server {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(config, dir)), 0o600); err != nil {
		tb.Fatal(err)
	}
	opts, err := natsserver.ProcessConfigFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	opts.NoLog, opts.NoSigs = true, true
	return startReferenceServer(tb, opts)
}
