package tests

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A full `bus backup` is a natscli backup directory too: `nats stream
// restore` takes it, and a `nats stream backup` directory goes through
// `bus restore`; both give the stream back equal.
func TestCLIBusBackupNatsRestore(t *testing.T) {
	t.Parallel()
	nats := natsCLI(t)
	bus, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := startBus(t, server.Options{JetStream: true})
	url := busURL(s)
	ctx := ctxT(t)
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	fillForBackup(t, ctx, js)
	before := dumpStream(t, ctx, js, "ORDERS")

	dir := filepath.Join(t.TempDir(), "bus")
	if out, err := exec.CommandContext(ctx, bus, "backup", "-s", url, "ORDERS", dir).CombinedOutput(); err != nil {
		t.Fatalf("bus backup: %v\n%s", err, out)
	}
	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, ctx, nats, url, "stream", "restore", dir); err != nil {
		t.Fatalf("nats stream restore of a bus backup: %v\n%s", err, out)
	}
	if after := dumpStream(t, ctx, js, "ORDERS"); !reflect.DeepEqual(before, after) {
		t.Fatalf("restored by natscli from a bus backup, differs:\nbefore %+v\nafter  %+v", before, after)
	}

	ndir := filepath.Join(t.TempDir(), "nats")
	if out, err := runCLI(t, ctx, nats, url, "stream", "backup", "ORDERS", ndir); err != nil {
		t.Fatalf("nats stream backup: %v\n%s", err, out)
	}
	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, bus, "restore", "-s", url, ndir).CombinedOutput(); err != nil {
		t.Fatalf("bus restore of a natscli backup: %v\n%s", err, out)
	}
	if after := dumpStream(t, ctx, js, "ORDERS"); !reflect.DeepEqual(before, after) {
		t.Fatalf("restored by bus from a natscli backup, differs:\nbefore %+v\nafter  %+v", before, after)
	}
}
