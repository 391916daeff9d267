package tests

import (
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/server"
)

// Two servers must never share a store: the second refuses to start,
// saying so, and the first keeps serving.
func TestStoreIsLockedAgainstASecondServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startBus(t, server.Options{JetStream: true, StoreDir: dir})
	second, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(); !errors.Is(err, jetlog.ErrLocked) {
		t.Fatalf("a second server on the same store started: %v", err)
	}
	js := jsClient(t, first)
	if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
		t.Fatalf("the first server after the refused second: %v", err)
	}
}
