package tests

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// Reloading a lower max_connections closes the connections over the new
// limit, as the reference's maxConnOption: each gets 'maximum connections
// exceeded' and is closed, the others stay, and /connz lists the closed
// ones with the reference's reason (issue 23).
func TestReloadLowerMaxConnectionsAsReference(t *testing.T) {
	t.Parallel()
	busOpts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), HTTPPort: -1, MaxConnections: 10}
	b := startBus(t, busOpts)
	refOpts := &natsserver.Options{Host: "127.0.0.1", Port: -1, HTTPPort: -1, NoLog: true, NoSigs: true, MaxConn: 10}
	r := startReferenceWith(t, func(o *natsserver.Options) { *o = *refOpts })
	for _, side := range []struct {
		name, url, http string
		reload          func() error
	}{
		{"bus", busURL(b), b.HTTPAddr().String(), func() error {
			o := busOpts
			o.MaxConnections = 2
			return b.Reload(o)
		}},
		{"reference", r.ClientURL(), r.MonitorAddr().String(), func() error {
			o := *refOpts
			o.MaxConn = 2
			o.Port = r.Addr().(*net.TCPAddr).Port
			return r.ReloadOptions(&o)
		}},
	} {
		t.Run(side.name, func(t *testing.T) {
			closed := make(chan struct{}, 5)
			conns := make([]*nats.Conn, 5)
			for i := range conns {
				conns[i] = connect(t, side.url, nats.NoReconnect(),
					nats.ClosedHandler(func(*nats.Conn) { closed <- struct{}{} }))
			}
			if err := side.reload(); err != nil {
				t.Fatalf("reload: %v", err)
			}
			for range 3 {
				select {
				case <-closed:
				case <-time.After(5 * time.Second):
					t.Fatal("fewer than 3 connections closed after max_connections 10 → 2")
				}
			}
			open := 0
			for _, nc := range conns {
				if nc.IsConnected() {
					open++
				} else if err := nc.LastError(); !errors.Is(err, nats.ErrMaxConnectionsExceeded) {
					t.Errorf("a closed client's error: %v, want %v", err, nats.ErrMaxConnectionsExceeded)
				}
			}
			if open != 2 {
				t.Errorf("%d connections open after the reload, want 2", open)
			}
			// A client sees its close before the server has moved the
			// connection to the closed list (the reference was caught
			// listing 2 of 3 in CI), so the list is polled until it
			// holds all three or the wait runs out.
			var code, exceeded int
			var body []byte
			waitFor(5*time.Second, func() bool {
				code, body = fetch(t, "http://"+side.http+"/connz?state=closed")
				exceeded = strings.Count(string(body), `"Maximum Connections Exceeded"`)
				// The reference records "Client Closed" now and then, when
				// the client's own close of a connection it was told to
				// drop is seen first (a race of its own, seen in CI); bus
				// records why it closed them.
				if side.name == "reference" {
					exceeded += strings.Count(string(body), `"Client Closed"`)
				}
				return code == 200 && exceeded >= 3
			})
			if code != 200 || exceeded != 3 {
				t.Errorf("/connz?state=closed (%d) does not list 3 × Maximum Connections Exceeded:\n%s", code, body)
			}
		})
	}
}
