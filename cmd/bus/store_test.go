package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// fillStore runs a bus on a new store: ORDERS with 20 messages of 100
// bytes and a consumer that acked 5, LOGS with 3 messages; then stops it
// (or, with keep, leaves it running). It returns the store_dir.
func fillStore(t *testing.T, keep bool) string {
	t.Helper()
	return fillStoreWith(t, keep, server.Options{})
}

// fillStoreWith is fillStore with the options' encryption.
func fillStoreWith(t *testing.T, keep bool, o server.Options) string {
	t.Helper()
	store := t.TempDir()
	s, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, StoreDir: store, JetStreamEncryption: o.JetStreamEncryption})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}
	nc, err := nats.Connect("nats://" + s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	orders, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LOGS", Subjects: []string{"logs.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := js.Publish(ctx, "orders.new", bytes.Repeat([]byte{byte('a' + i)}, 100)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := js.Publish(ctx, "logs.app", []byte("line")); err != nil {
			t.Fatal(err)
		}
	}
	c, err := orders.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "worker", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(5, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		_ = m.DoubleAck(ctx)
	}
	nc.Close()
	if keep {
		t.Cleanup(stop)
	} else {
		stop()
	}
	return store
}

// treeSum is every file's path, mode, size and content hash under dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %v", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// bus store info and verify on a sound store: what it holds, no damage,
// and not a byte of the directory changed (names, sizes, times, content).
func TestStoreInfoVerifyReadOnly(t *testing.T) {
	t.Parallel()
	store := fillStore(t, false)
	before := treeSum(t, store)
	out := mustRun(t, "store", "info", store)
	for _, want := range []string{"ORDERS", "LOGS", "20", "file"} {
		if !strings.Contains(out, want) {
			t.Errorf("store info lacks %q:\n%s", want, out)
		}
	}
	out = mustRun(t, "store", "verify", store)
	if !strings.Contains(out, "ORDERS: ok, 20 messages, seqs 1..20, 1 consumers") || !strings.Contains(out, "2 streams, no damage") {
		t.Errorf("store verify:\n%s", out)
	}
	if after := treeSum(t, store); after != before {
		t.Fatalf("the store changed:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// A flipped byte in a record: verify names the stream and the exact seq,
// exits 3, and still changes nothing.
func TestStoreVerifyFindsDamage(t *testing.T) {
	t.Parallel()
	store := fillStore(t, false)
	seg := filepath.Join(store, "jetstream", "ORDERS", "0000000000000001.seg")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// The payload of seq 7: records are written in order, each holding
	// its 100 bytes of one letter.
	at := bytes.Index(data, bytes.Repeat([]byte{'g'}, 100))
	if at < 0 {
		t.Fatal("seq 7's payload not found in the segment")
	}
	data[at+50] ^= 0x01
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, store)
	out, errOut, code := runInProcess(t, "", "store", "verify", store)
	if code != exitDamaged {
		t.Fatalf("exit %d, want %d: %s %s", code, exitDamaged, out, errOut)
	}
	if !strings.Contains(out, "ORDERS: DAMAGED") || !strings.Contains(out, "lost seqs 7 (acked)") || !strings.Contains(out, "LOGS: ok") {
		t.Errorf("store verify:\n%s", out)
	}
	if after := treeSum(t, store); after != before {
		t.Fatal("verify changed the damaged store")
	}
}

// A store a running bus holds is refused, saying so.
func TestStoreVerifyRefusesLockedStore(t *testing.T) {
	t.Parallel()
	store := fillStore(t, true)
	_, errOut, code := runInProcess(t, "", "store", "verify", store)
	if code != exitFailure || !strings.Contains(errOut, "held by a running bus") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// A flipped byte in a consumer's journal: verify names the consumer and
// the file, exits 3, and changes nothing.
func TestStoreVerifyFindsConsumerDamage(t *testing.T) {
	t.Parallel()
	store := fillStore(t, false)
	journal := filepath.Join(store, "jetstream", "ORDERS", "consumers", "worker", "journal.0")
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x04
	if err := os.WriteFile(journal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, store)
	out, errOut, code := runInProcess(t, "", "store", "verify", store)
	if code != exitDamaged || !strings.Contains(out, "consumer worker journal damaged: consumers/worker/journal.0 at offset") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	if after := treeSum(t, store); after != before {
		t.Fatal("verify changed the store")
	}
}

// An encrypted store is checked with its key, not without it (exit 1,
// each stream "NOT CHECKED"), and never changed either way.
func TestStoreVerifyEncrypted(t *testing.T) {
	t.Parallel()
	store := fillStoreWith(t, false, server.Options{JetStreamEncryption: server.JetStreamEncryption{Key: "s3cret-key-for-the-test"}})
	before := treeSum(t, store)
	out, _, code := runInProcess(t, "", "store", "verify", store)
	if code != exitFailure || !strings.Contains(out, "ORDERS: NOT CHECKED") {
		t.Fatalf("without the key: exit %d\n%s", code, out)
	}
	out = mustRun(t, "store", "verify", "--key", "s3cret-key-for-the-test", store)
	if !strings.Contains(out, "ORDERS: ok, 20 messages") || !strings.Contains(out, "2 streams, no damage") {
		t.Fatalf("with the key:\n%s", out)
	}
	if after := treeSum(t, store); after != before {
		t.Fatal("verify changed the encrypted store")
	}
}
