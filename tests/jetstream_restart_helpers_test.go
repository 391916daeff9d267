package tests

import (
	"net"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// sameAcrossRestart runs a scenario that restarts its server midway
// (restart stops it and starts it again on the same port and store)
// against the reference and against bus, and compares the outcomes.
func sameAcrossRestart(t *testing.T, scenario func(t *testing.T, url string, restart func()) []string) {
	t.Helper()
	refDir := t.TempDir()
	ref := startReferenceWith(t, func(o *natsserver.Options) { o.JetStream, o.StoreDir = true, refDir })
	refOut := scenario(t, ref.ClientURL(), func() {
		port := ref.Addr().(*net.TCPAddr).Port
		ref.Shutdown()
		ref.WaitForShutdown()
		ref = startReferenceWith(t, func(o *natsserver.Options) { o.JetStream, o.StoreDir, o.Port = true, refDir, port })
	})
	busDir := t.TempDir()
	bus := startJSAt(t, busDir)
	t.Cleanup(func() { shutdown(t, bus) })
	addr := bus.Addr().String()
	busOut := scenario(t, busURL(bus), func() {
		shutdown(t, bus)
		bus = startJSOn(t, addr, busDir)
	})
	sameOutcomes(t, refOut, busOut)
}
