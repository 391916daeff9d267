package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

func startJetStreamBus(t *testing.T) (string, jetstream.JetStream) {
	t.Helper()
	s, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	url := "nats://" + s.Addr().String()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return url, js
}

// dump is a stream as a restore must give it back.
type dump struct {
	First, Last uint64
	Msgs        []string // seq, subject, header, data, time
	Consumers   []string // name, delivered, ack floor, pending
}

func dumpOf(t *testing.T, js jetstream.JetStream, name string) dump {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := dump{First: info.State.FirstSeq, Last: info.State.LastSeq}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		if m, err := s.GetMsg(ctx, seq); err == nil {
			d.Msgs = append(d.Msgs, fmt.Sprintf("%d %s %v %q %d", m.Sequence, m.Subject, m.Header, m.Data, m.Time.UnixNano()))
		}
	}
	for ci := range s.ListConsumers(ctx).Info() {
		d.Consumers = append(d.Consumers, fmt.Sprintf("%s %d/%d %d/%d %d", ci.Name, ci.Delivered.Consumer, ci.Delivered.Stream,
			ci.AckFloor.Consumer, ci.AckFloor.Stream, ci.NumAckPending))
	}
	return d
}

func publishN(t *testing.T, js jetstream.JetStream, n int, tag string) {
	t.Helper()
	for i := range n {
		m := nats.NewMsg("orders." + tag)
		m.Header.Set("Tag", fmt.Sprint(tag, i))
		m.Data = []byte(strings.Repeat(tag, i+1))
		if _, err := js.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

func ackSome(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	c, err := js.Consumer(context.Background(), "ORDERS", "worker")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for m := range batch.Messages() {
		if i++; i != n { // the last fetched stays pending
			_ = m.DoubleAck(context.Background())
		}
	}
}

// backupChain makes ORDERS (storage st) and takes a full backup and two
// increments while it grows, a consumer acks and a message is deleted.
func backupChain(t *testing.T, url string, js jetstream.JetStream, st jetstream.StorageType) (full, inc1, inc2 string) {
	t.Helper()
	ctx := context.Background()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "worker", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Hour}); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	full, inc1, inc2 = filepath.Join(root, "full"), filepath.Join(root, "inc1"), filepath.Join(root, "inc2")
	publishN(t, js, 5, "a")
	ackSome(t, js, 2)
	mustRun(t, "backup", "-s", url, "ORDERS", full)
	publishN(t, js, 4, "b")
	if err := s.DeleteMsg(ctx, 7); err != nil { // a gap inside the first increment
		t.Fatal(err)
	}
	ackSome(t, js, 3)
	mustRun(t, "backup", "-s", url, "ORDERS", inc1, "--incremental", full)
	publishN(t, js, 3, "c")
	mustRun(t, "backup", "-s", url, "ORDERS", inc2, "--incremental", inc1)
	return full, inc1, inc2
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := runInProcess(t, "", args...)
	if code != exitOK {
		t.Fatalf("bus %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func runExpect(t *testing.T, code int, want string, args ...string) {
	t.Helper()
	_, errOut, got := runInProcess(t, "", args...)
	if got != code || !strings.Contains(errOut, want) {
		t.Fatalf("bus %s: exit %d, %q; want exit %d naming %q", strings.Join(args, " "), got, errOut, code, want)
	}
}

// A full backup and two increments, restored in order, give the stream
// back as it was at the last: every message (seq, subject, header, data,
// time), the gap, the consumer's state; for file and memory streams.
func TestBackupIncrementalRestore(t *testing.T) {
	t.Parallel()
	for _, st := range []jetstream.StorageType{jetstream.FileStorage, jetstream.MemoryStorage} {
		t.Run(st.String(), func(t *testing.T) {
			t.Parallel()
			url, js := startJetStreamBus(t)
			full, inc1, inc2 := backupChain(t, url, js, st)
			before := dumpOf(t, js, "ORDERS")
			if len(before.Msgs) != 11 || before.Last != 12 {
				t.Fatalf("before: %+v", before)
			}
			// Beside the original, under another name: the full backup alone.
			mustRun(t, "restore", "-s", url, full, "--name", "COPY", "--subjects", "copy.>")
			if copied := dumpOf(t, js, "COPY"); copied.Last != 5 || len(copied.Msgs) != 5 || !reflect.DeepEqual(copied.Msgs, before.Msgs[:5]) {
				t.Fatalf("COPY from the full backup: %+v", copied)
			}
			if err := js.DeleteStream(context.Background(), "ORDERS"); err != nil {
				t.Fatal(err)
			}
			out := mustRun(t, "restore", "-s", url, full, inc1, inc2)
			if !strings.Contains(out, "2 increments") {
				t.Errorf("restore said %q", out)
			}
			if after := dumpOf(t, js, "ORDERS"); !reflect.DeepEqual(before, after) {
				t.Fatalf("restored differs:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// What a restore refuses, with the exit code and what it says; the
// existing stream is left as it was every time.
func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	url, js := startJetStreamBus(t)
	full, inc1, inc2 := backupChain(t, url, js, jetstream.FileStorage)
	before := dumpOf(t, js, "ORDERS")

	runExpect(t, exitExists, "exists and is left as it is", "restore", "-s", url, full, inc1, inc2)
	runExpect(t, exitDamaged, "a gap: it holds the messages after seq 9", "restore", "-s", url, full, inc2)
	runExpect(t, exitDamaged, "not a full backup", "restore", "-s", url, inc1)
	runExpect(t, exitDamaged, "a full backup, not an increment", "restore", "-s", url, full, full)

	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.CopyFS(bad, os.DirFS(inc1)); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(bad, backupDataFile)
	b, _ := os.ReadFile(data)
	b[len(b)/2] ^= 0x20
	_ = os.WriteFile(data, b, 0o600)
	runExpect(t, exitDamaged, bad+": snapshot is damaged", "restore", "-s", url, "--name", "X", full, bad, inc2)
	_ = os.WriteFile(data, b[:len(b)-10], 0o600)
	runExpect(t, exitDamaged, "incomplete", "restore", "-s", url, "--name", "X", full, bad)
	_ = os.Remove(filepath.Join(bad, backupMetaFile))
	runExpect(t, exitDamaged, "not a backup directory, or a backup that did not end", "restore", "-s", url, "--name", "X", full, bad)

	runExpect(t, exitUsage, "holds a backup already", "backup", "-s", url, "ORDERS", full)
	runExpect(t, exitFailure, "stream not found", "backup", "-s", url, "NOPE", filepath.Join(t.TempDir(), "n"))

	if after := dumpOf(t, js, "ORDERS"); !reflect.DeepEqual(before, after) {
		t.Fatalf("ORDERS changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if _, err := js.Stream(context.Background(), "X"); err == nil {
		t.Fatal("a refused restore created X")
	}

	// An increment of a stream deleted and made again is refused.
	if err := js.DeleteStream(context.Background(), "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	publishN(t, js, 20, "d")
	runExpect(t, exitDamaged, "deleted and created again", "backup", "-s", url, "ORDERS", filepath.Join(t.TempDir(), "inc3"), "--incremental", inc2)
}
