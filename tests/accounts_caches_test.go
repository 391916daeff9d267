package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// TestAccountsShareStoreCaches checks that every account's JetStream
// shares the server's one file cache and one index cache (issue #30):
// with 100 accounts, each with a stream and a durable consumer that were
// written and read, the store files the process holds open stay within
// the one bound, and /jsz reports the bounds once, not once per account.
func TestAccountsShareStoreCaches(t *testing.T) {
	t.Parallel()
	const accounts, maxOpen, indexMemory = 100, 16, 8 << 20
	opts := server.Options{StoreDir: t.TempDir(), JetStream: true,
		JetStreamMaxOpenFiles: maxOpen, JetStreamIndexMemory: indexMemory}
	for i := range accounts {
		opts.Accounts = append(opts.Accounts, server.Account{Name: fmt.Sprintf("A%d", i),
			Users:     []server.User{{Name: fmt.Sprintf("u%d", i), Password: accountsPass}},
			JetStream: &server.AccountJetStream{}})
	}
	s := startBus(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	peak := 0
	for i := range accounts {
		nc := connectAs(t, busURL(s), fmt.Sprintf("u%d", i))
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			if _, err := js.Publish(ctx, fmt.Sprintf("s.%d", k), []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := c.Fetch(3, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range msgs.Messages() {
			// A double ack syncs the journal; after plain acks it stays
			// unsynced, and the cache keeps an unsynced file open (see
			// jetlog.FileCache) until something syncs it.
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
		nc.Close()
		peak = max(peak, storeFilesOpen(t, opts.StoreDir))
	}
	// A file written since its last sync stays open until synced (the
	// cache exceeds its bound rather than lose a write-back error), so
	// the bound holds once the consumers' journals are synced: 100
	// accounts with a bound each would hold 200 files or more.
	open := 0
	if !waitFor(10*time.Second, func() bool { open = storeFilesOpen(t, opts.StoreDir); return open <= maxOpen }) {
		t.Fatalf("the process holds %d store files open (at most %d while writing); the bound is %d; some: %q", open, peak, maxOpen, storeFilesOpenNames(t, opts.StoreDir, 5))
	}
	t.Logf("store files open: at most %d while writing to %d accounts, %d after; bound %d", peak, accounts, open, maxOpen)
	jsz := s.Jsz(server.JszOptions{})
	if jsz.MaxOpenFiles != maxOpen || jsz.MaxIndexMemory != indexMemory {
		t.Fatalf("/jsz bounds: %d files, %d index bytes; want %d and %d, counted once", jsz.MaxOpenFiles, jsz.MaxIndexMemory, maxOpen, indexMemory)
	}
	if jsz.OpenFiles > maxOpen {
		t.Fatalf("/jsz open files %d over the bound %d", jsz.OpenFiles, maxOpen)
	}
}

// storeFilesOpen counts this process's descriptors open on files under
// dir (Linux's /proc; the test is skipped elsewhere).
func storeFilesOpen(t *testing.T, dir string) int {
	t.Helper()
	return len(storeFilesOpenNames(t, dir, -1))
}

// storeFilesOpenNames lists up to limit (-1: all) of them.
func storeFilesOpenNames(t *testing.T, dir string, limit int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) && filepath.Base(target) != "LOCK" &&
			(limit < 0 || len(out) < limit) {
			out = append(out, strings.TrimPrefix(target, dir))
		}
	}
	return out
}
