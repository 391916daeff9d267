package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// runningStore starts a bus on a new store with ORDERS (20 messages of
// 100 bytes, seq n's all letter 'a'+n-1, and a consumer that acked 5);
// it returns the client URL, the store_dir and a stop function (also
// run at cleanup).
func runningStore(t *testing.T) (string, string, func()) {
	t.Helper()
	store := t.TempDir()
	s, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}
	t.Cleanup(stop)
	url := "nats://" + s.Addr().String()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	orders, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := js.Publish(ctx, "orders.new", bytes.Repeat([]byte{byte('a' + i)}, 100)); err != nil {
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
	return url, store, stop
}

// bus store verify -s URL STREAM on a running bus: the offline command's
// output and exit codes, before and after a byte of seq 7 is flipped in
// the active segment's file, and the same damage lines as the offline
// check of the store once the bus is stopped.
func TestStoreVerifyOnlineCommand(t *testing.T) {
	t.Parallel()
	url, store, stop := runningStore(t)
	out := mustRun(t, "store", "verify", "-s", url, "ORDERS")
	if out != "ORDERS: ok, 20 messages, seqs 1..20, 1 consumers\n1 streams, no damage\n" {
		t.Fatalf("sound stream:\n%s", out)
	}
	seg := filepath.Join(store, "jetstream", "ORDERS", "0000000000000001.seg")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, bytes.Repeat([]byte{'g'}, 100))
	if at < 0 {
		t.Fatal("seq 7's payload not found")
	}
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'g' ^ 0x01}, int64(at+50)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	online, errOut, code := runInProcess(t, "", "store", "verify", "-s", url, "ORDERS")
	if code != exitDamaged || !strings.HasPrefix(online, "ORDERS: DAMAGED\n") || !strings.Contains(online, "  lost seqs 7 (acked): corrupt record in 0000000000000001.seg\n") {
		t.Fatalf("exit %d:\n%s%s", code, online, errOut)
	}
	stop()
	offline, _, code := runInProcess(t, "", "store", "verify", store)
	if code != exitDamaged {
		t.Fatalf("offline exit %d:\n%s", code, offline)
	}
	// Each damage line online is one offline too (where recovery may add
	// what it repaired at the start, such as a catalog snapshot rebuilt).
	for _, line := range strings.Split(online, "\n")[1:] {
		if line != "" && !strings.Contains(offline, line+"\n") {
			t.Fatalf("online line %q not offline:\n%s\n---\n%s", line, online, offline)
		}
	}
}

// The online command's refusals: no such stream (exit 1, with the API's
// error), --key with -s (exit 2).
func TestStoreVerifyOnlineCommandRefusals(t *testing.T) {
	t.Parallel()
	url, _, _ := runningStore(t)
	runExpect(t, exitFailure, "stream not found (404/10059)", "store", "verify", "-s", url, "MISSING")
	runExpect(t, exitUsage, "--key and --cipher are for a store directory", "store", "verify", "-s", url, "--key", "k", "ORDERS")
}
