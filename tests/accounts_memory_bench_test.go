package tests

import (
	"fmt"
	"runtime"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// idleAccounts is how many configured accounts the memory benchmark
// starts a server with.
const idleAccounts = 500

// BenchmarkAccountsIdleMemory reports the live heap each configured
// account costs, idle (no connections) and with one connection each, for
// bus and the reference, each started alone in this process and measured
// against the heap before it started:
//
//	go test ./tests -run '^$' -bench AccountsIdleMemory -benchtime 1x
func BenchmarkAccountsIdleMemory(b *testing.B) {
	for _, name := range []string{"server=nats-server", "server=bus"} {
		for _, connected := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/connected=%v", name, connected), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					before := liveHeap()
					url, stop := startIdleAccounts(b, name == "server=bus")
					var conns []*nats.Conn
					if connected {
						for j := 0; j < idleAccounts; j++ {
							nc, err := nats.Connect(url, nats.UserInfo(fmt.Sprintf("u%d", j), accountsPass))
							if err != nil {
								b.Fatal(err)
							}
							conns = append(conns, nc)
						}
					}
					after := liveHeap()
					b.ReportMetric(float64(after-before)/idleAccounts, "B/account")
					for _, nc := range conns {
						nc.Close()
					}
					stop()
				}
			})
		}
	}
}

// startIdleAccounts starts bus (or the reference) with idleAccounts
// accounts of one user each and returns its URL and a stop function.
func startIdleAccounts(b *testing.B, bus bool) (string, func()) {
	b.Helper()
	if bus {
		opts := server.Options{Host: "127.0.0.1", StoreDir: b.TempDir()}
		for i := 0; i < idleAccounts; i++ {
			opts.Accounts = append(opts.Accounts, server.Account{Name: fmt.Sprintf("A%d", i),
				Users: []server.User{{Name: fmt.Sprintf("u%d", i), Password: accountsPass}}})
		}
		s, err := server.New(opts)
		if err != nil || s.Start() != nil {
			b.Fatal("start bus")
		}
		return busURL(s), func() { shutdown(b, s) }
	}
	opts := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	for i := 0; i < idleAccounts; i++ {
		acc := natsserver.NewAccount(fmt.Sprintf("A%d", i))
		opts.Accounts = append(opts.Accounts, acc)
		opts.Users = append(opts.Users, &natsserver.User{Username: fmt.Sprintf("u%d", i), Password: accountsPass, Account: acc})
	}
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		b.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10e9) {
		b.Fatal("reference not ready")
	}
	return ns.ClientURL(), func() { ns.Shutdown(); ns.WaitForShutdown() }
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
