package tests

import (
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// startReference runs the real nats-server in-process on a free loopback
// port, as the oracle for differential tests.
func startReference(t *testing.T, jetstream bool) *natsserver.Server {
	t.Helper()
	return startReferenceTB(t, jetstream)
}

// startReferenceB is startReference for benchmarks.
func startReferenceB(b *testing.B) *natsserver.Server { return startReferenceTB(b, false) }

func startReferenceTB(t testing.TB, jetstream bool) *natsserver.Server {
	t.Helper()
	return startReferenceWith(t, func(o *natsserver.Options) {
		if jetstream {
			o.JetStream, o.StoreDir = true, t.TempDir()
		}
	})
}

// startReferenceWith runs the reference on free loopback ports with the
// options configure sets beside those, and stops it when the test ends.
func startReferenceWith(t testing.TB, configure func(*natsserver.Options)) *natsserver.Server {
	t.Helper()
	opts := &natsserver.Options{Host: "127.0.0.1", Port: -1, HTTPPort: -1, NoLog: true, NoSigs: true}
	configure(opts)
	return startReferenceServer(t, opts)
}

// startReferenceServer runs the reference with opts as they are (a test
// that builds them from a config file, a command line or refOptions),
// waits until it takes clients and stops it when the test ends. Each
// beforeStart runs on the server before it starts (a logger that must see
// the first connection). Every test that starts the reference goes
// through here or startReferenceWith.
func startReferenceServer(t testing.TB, opts *natsserver.Options, beforeStart ...func(*natsserver.Server)) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatalf("reference server: %v", err)
	}
	for _, f := range beforeStart {
		f(ns)
	}
	go ns.Start()
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("reference server not ready")
	}
	return ns
}

func refAddr(ns *natsserver.Server) string { return ns.Addr().String() }
