package tests

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A restore that fills the disk (a write under the store's staging
// directory fails with ENOSPC, at its first write, then later and later
// ones) is refused, with the disk's error, and leaves nothing: no stream
// of that name, no staging files, the other streams as they were. With
// room for it all the same backup restores whole.
// The restore's staging goes through the store's file system
// (server.Options.StoreFS), so it meets the same faults as the streams.
func TestRestoreOnFullDiskLeavesNothing(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	ffs := newFaultFS()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store, StoreFS: ffs})
	url := busURL(s)
	bin := natsCLI(t)
	ctx := ctxT(t)
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	fillForBackup(t, ctx, js)
	before := readBackupState(t, ctx, js)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "other.a", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "orders")
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if out, err := runCLI(t, cctx, bin, url, "stream", "backup", "ORDERS", dir); err != nil {
		t.Fatalf("nats stream backup: %v\n%s", err, out)
	}
	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}

	// The disk fills at the restore's first write, then at later and
	// later ones (the spool, then the build), until one has room for it
	// all: each cut restore is refused and leaves nothing.
	staging := filepath.Join(store, "jetstream", ".restore")
	restored := false
	for budget := 0; !restored; budget = budget*3/2 + 1 {
		if budget > 100000 {
			t.Fatal("the restore never finished")
		}
		ffs.fillAfter(staging, budget)
		out, err := runCLI(t, cctx, bin, url, "stream", "restore", dir)
		ffs.set(staging, nil)
		if err == nil {
			restored = true
			break
		}
		if !strings.Contains(string(out), "no space left on device") {
			t.Fatalf("restore cut at write %d: %v\n%s", budget, err, out)
		}
		if _, err := js.Stream(ctx, "ORDERS"); err == nil {
			t.Fatalf("a restore cut at write %d left a stream ORDERS", budget)
		}
		if names, _ := os.ReadDir(staging); len(names) != 0 {
			t.Fatalf("a restore cut at write %d left %d staging entries", budget, len(names))
		}
		if m, err := mustStream(t, js, "OTHER").GetMsg(ctx, 1); err != nil || string(m.Data) != "kept" {
			t.Fatalf("the other stream after a restore cut at write %d: %v", budget, err)
		}
	}
	if after := readBackupState(t, ctx, js); !reflect.DeepEqual(before, after) {
		t.Fatalf("restored differs:\nbefore %+v\nafter  %+v", before, after)
	}
}
