package tests

import (
	"testing"

	"github.com/bus-dev/bus/server"
)

// benchServer starts one JetStream server for a side-by-side benchmark
// and returns its client URL; it stops when the benchmark ends.
type benchServer struct {
	name  string
	start func(b *testing.B) string
}

// jetStreamBenchServers are bus and the embedded reference, each with
// JetStream and a fresh store.
var jetStreamBenchServers = []benchServer{
	{"bus", func(b *testing.B) string {
		s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: b.TempDir(), JetStream: true})
		if err != nil || s.Start() != nil {
			b.Fatal("start bus")
		}
		b.Cleanup(func() { shutdown(b, s) })
		return busURL(s)
	}},
	{"nats-server", func(b *testing.B) string { return "nats://" + refAddr(startReferenceTB(b, true)) }},
}
