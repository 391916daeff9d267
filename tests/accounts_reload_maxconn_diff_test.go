package tests

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The %q is the config's directory (writeReferenceConfig); a comment here.
const reloadAccountConnBefore = `
# in %q
listen: 127.0.0.1:-1
accounts { A { users: [ {user: a1, password: pw} ], limits { max_connections: 10 } } }
`

const reloadAccountConnAfter = `
# in %q
listen: 127.0.0.1:-1
accounts { A { users: [ {user: a1, password: pw} ], limits { max_connections: 1 } } }
`

func reloadAccountConnOptions(storeDir string, limit int) server.Options {
	return server.Options{Host: "127.0.0.1", StoreDir: storeDir, Accounts: []server.Account{
		{Name: "A", Users: []server.User{{Name: "a1", Password: accountsPass}}, Limits: server.AccountLimits{MaxConnections: limit}},
	}}
}

// A reload that lowers an account's limits { max_connections } below
// the connections it has closes the excess with 'maximum account active
// connections exceeded' and keeps the rest, on bus as on the reference
// (nats.go's TestAlwaysReconnectOnAccountMaxConnectionsExceededErr).
// Which one goes differs: bus closes the newest, as on a JWT update;
// the reference the ones it meets first in a map.
func TestAccountsReloadLowersMaxConnectionsAsReference(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bus := startBus(t, reloadAccountConnOptions(dir, 10))
	ref, path := startReferenceFile(t, reloadAccountConnBefore)
	for _, side := range []struct {
		name, url string
		reload    func() error
	}{
		{"bus", busURL(bus), func() error { return bus.Reload(reloadAccountConnOptions(dir, 1)) }},
		{"reference", ref.ClientURL(), func() error {
			writeReferenceConfig(t, path, reloadAccountConnAfter)
			return ref.Reload()
		}},
	} {
		t.Run(side.name, func(t *testing.T) {
			closed := make(chan struct{}, 2)
			conns := make([]*nats.Conn, 2)
			for i := range conns {
				conns[i] = connect(t, side.url, nats.UserInfo("a1", accountsPass), nats.NoReconnect(),
					nats.ClosedHandler(func(*nats.Conn) { closed <- struct{}{} }))
			}
			if err := side.reload(); err != nil {
				t.Fatalf("reload: %v", err)
			}
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("no connection closed after the account's max_connections 10 → 1")
			}
			open := 0
			for _, nc := range conns {
				if nc.IsConnected() {
					open++
				} else if err := nc.LastError(); !errors.Is(err, nats.ErrMaxAccountConnectionsExceeded) {
					t.Errorf("the closed client's error: %v, want %v", err, nats.ErrMaxAccountConnectionsExceeded)
				}
			}
			if open != 1 {
				t.Errorf("%d connections open after the reload, want 1", open)
			}
		})
	}
}
