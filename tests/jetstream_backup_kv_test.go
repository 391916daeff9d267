package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// streamDump is a whole stream as a backup must carry it: every stored
// message (seq, subject, header, data, time), the first and last seq, and
// each durable consumer's delivery state.
type streamDump struct {
	First, Last uint64
	Msgs        []backupMsg
	Consumers   map[string]jetstream.ConsumerInfo
}

func dumpStream(t *testing.T, ctx context.Context, js jetstream.JetStream, name string) streamDump {
	t.Helper()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := streamDump{First: info.State.FirstSeq, Last: info.State.LastSeq, Consumers: map[string]jetstream.ConsumerInfo{}}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // a gap
		}
		d.Msgs = append(d.Msgs, backupMsg{m.Sequence, m.Subject, m.Header, string(m.Data), m.Time.UTC()})
	}
	for ci := range s.ListConsumers(ctx).Info() {
		c := jetstream.ConsumerInfo{Delivered: ci.Delivered, AckFloor: ci.AckFloor, NumAckPending: ci.NumAckPending, NumRedelivered: ci.NumRedelivered, NumPending: ci.NumPending}
		c.Delivered.Last, c.AckFloor.Last = nil, nil
		d.Consumers[ci.Name] = c
	}
	return d
}

// cliRoundTrip backs stream up with natscli, removes it with drop, and
// restores it.
func cliRoundTrip(t *testing.T, ctx context.Context, url, stream string, drop func() error) {
	t.Helper()
	bin := natsCLI(t)
	dir := filepath.Join(t.TempDir(), stream)
	if out, err := runCLI(t, ctx, bin, url, "stream", "backup", stream, dir); err != nil {
		t.Fatalf("nats stream backup %s: %v\n%s", stream, err, out)
	}
	if err := drop(); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, ctx, bin, url, "stream", "restore", dir); err != nil {
		t.Fatalf("nats stream restore %s: %v\n%s", stream, err, out)
	}
}

// A KV bucket survives a natscli backup and restore: every revision, the
// delete and purge markers, the history, and a watcher's durable
// consumer; the restored bucket answers as before.
func TestJetStreamBackupKVBucketCLI(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, StoreDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(ctxT(t), 60*time.Second)
	defer cancel()
	js, err := jetstream.New(connect(t, busURL(s)))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "cfg", History: 5, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b", "a", "c", "a", "b"} {
		if _, err := kv.Put(ctx, k, []byte{byte('0' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	kvs, _ := js.Stream(ctx, "KV_cfg")
	if _, err := kvs.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "audit", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	before := dumpStream(t, ctx, js, "KV_cfg")
	cliRoundTrip(t, ctx, busURL(s), "KV_cfg", func() error { return js.DeleteKeyValue(ctx, "cfg") })
	if after := dumpStream(t, ctx, js, "KV_cfg"); !reflect.DeepEqual(before, after) {
		t.Fatalf("restored bucket differs:\nbefore %+v\nafter  %+v", before, after)
	}
	kv, err = js.KeyValue(ctx, "cfg")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, "a"); err != nil || string(e.Value()) != "4" {
		t.Fatalf("a after restore: %v %v", e, err)
	}
	if _, err := kv.Get(ctx, "b"); err == nil {
		t.Fatal("b was deleted before the backup, and is back")
	}
	if h, err := kv.History(ctx, "a"); err != nil || len(h) != 3 {
		t.Fatalf("history of a after restore: %d entries, %v; want 3", len(h), err)
	}
	if _, err := kv.Put(ctx, "d", []byte("new")); err != nil {
		t.Fatalf("a put into the restored bucket: %v", err)
	}
}

// An object store survives a natscli backup and restore: the chunks and
// the meta messages, so every object reads back byte for byte.
func TestJetStreamBackupObjectStoreCLI(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, StoreDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(ctxT(t), 60*time.Second)
	defer cancel()
	js, err := jetstream.New(connect(t, busURL(s)))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "files", Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string][]byte{}
	for name, size := range map[string]int{"small": 10, "chunked": 300 << 10, "empty": 0} {
		b := make([]byte, size)
		_, _ = rand.Read(b)
		objects[name] = b
		if _, err := obs.PutBytes(ctx, name, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := obs.Delete(ctx, "small"); err != nil {
		t.Fatal(err)
	}
	delete(objects, "small")
	before := dumpStream(t, ctx, js, "OBJ_files")
	cliRoundTrip(t, ctx, busURL(s), "OBJ_files", func() error { return js.DeleteObjectStore(ctx, "files") })
	if after := dumpStream(t, ctx, js, "OBJ_files"); !reflect.DeepEqual(before, after) {
		t.Fatalf("restored object store differs:\nbefore %d messages %d..%d\nafter  %d messages %d..%d", len(before.Msgs), before.First, before.Last, len(after.Msgs), after.First, after.Last)
	}
	obs, err = js.ObjectStore(ctx, "files")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range objects {
		r, err := obs.Get(ctx, name)
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		got, err := io.ReadAll(r)
		_ = r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s after restore: %d bytes, %v; want %d", name, len(got), err, len(want))
		}
	}
	if _, err := obs.Get(ctx, "small"); err == nil {
		t.Fatal("small was deleted before the backup, and is back")
	}
}

// natscli refuses to back up or restore a memory stream itself, before it
// asks the server (jsm.go's ErrMemoryStreamNotSupported); bus backup and
// bus restore do it (cmd/bus tests).
func TestJetStreamBackupMemoryStreamCLIRefuses(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	s := startBus(t, server.Options{JetStream: true})
	ctx, cancel := context.WithTimeout(ctxT(t), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(connect(t, busURL(s)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "HOT", Subjects: []string{"hot.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, ctx, bin, busURL(s), "stream", "backup", "HOT", filepath.Join(t.TempDir(), "hot"))
	if err == nil || !bytes.Contains([]byte(out), []byte("memory streams do not support snapshots")) {
		t.Fatalf("nats stream backup of a memory stream: %v\n%s", err, out)
	}
}
