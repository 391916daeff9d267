package tests

import (
	"os"
	"path/filepath"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// importBenchConfig is the reference's config for the import hops: A
// exports the stream bench and the service svc, B imports both.
const importBenchConfig = `
accounts {
  A { users: [ {user: a, password: pw} ], exports: [ {stream: bench}, {service: svc} ] }
  B { users: [ {user: b, password: pw} ], imports: [
    {stream: {account: A, subject: bench}}, {service: {account: A, subject: svc}} ] }
}
`

// importBenchServers starts bus and the reference with importBenchConfig
// and returns their client URLs, reference first.
func importBenchServers(b *testing.B) [2][2]string {
	b.Helper()
	bus, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: b.TempDir(), Accounts: []server.Account{
		{Name: "A", Users: []server.User{{Name: "a", Password: accountsPass}},
			Exports: server.Exports{Streams: []server.StreamExport{{Subject: "bench"}}, Services: []server.ServiceExport{{Subject: "svc"}}}},
		{Name: "B", Users: []server.User{{Name: "b", Password: accountsPass}},
			Imports: server.Imports{Streams: []server.StreamImport{{Account: "A", Subject: "bench"}}, Services: []server.ServiceImport{{Account: "A", Subject: "svc"}}}},
	}})
	if err != nil || bus.Start() != nil {
		b.Fatal("start bus")
	}
	b.Cleanup(func() { shutdown(b, bus) })
	path := filepath.Join(b.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(importBenchConfig), 0o600); err != nil {
		b.Fatal(err)
	}
	fileOpts, err := natsserver.ProcessConfigFile(path)
	if err != nil {
		b.Fatal(err)
	}
	ref := startReferenceWith(b, func(o *natsserver.Options) {
		*o = *fileOpts
		o.Host, o.Port, o.HTTPPort, o.NoLog, o.NoSigs = "127.0.0.1", -1, -1, true, true
	})
	return [2][2]string{{"server=nats-server", ref.ClientURL()}, {"server=bus", busURL(bus)}}
}

// BenchmarkAccountsStreamImport publishes in A to a subscriber in B that
// imports the stream, for bus and the reference side by side:
//
//	go test ./tests -run '^$' -bench AccountsStreamImport -benchtime 200000x
func BenchmarkAccountsStreamImport(b *testing.B) {
	for _, side := range importBenchServers(b) {
		b.Run(side[0], func(b *testing.B) {
			benchPubSubAcross(b, side[1], 1, nats.UserInfo("a", accountsPass), nats.UserInfo("b", accountsPass))
		})
	}
}

// BenchmarkAccountsServiceImport sends requests from B through its
// service import to a responder in A, one at a time (a round trip per
// op), for bus and the reference side by side:
//
//	go test ./tests -run '^$' -bench AccountsServiceImport -benchtime 20000x
func BenchmarkAccountsServiceImport(b *testing.B) {
	for _, side := range importBenchServers(b) {
		b.Run(side[0], func(b *testing.B) {
			responder, err := nats.Connect(side[1], nats.UserInfo("a", accountsPass))
			if err != nil {
				b.Fatal(err)
			}
			defer responder.Close()
			_, _ = responder.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond(m.Data) })
			_ = responder.Flush()
			requester, err := nats.Connect(side[1], nats.UserInfo("b", accountsPass))
			if err != nil {
				b.Fatal(err)
			}
			defer requester.Close()
			payload := make([]byte, 16)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := requester.Request("svc", payload, 5e9); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
