package tests

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// backupState is what a backup must carry over: every message as stored
// (seq, subject, header, data, time), the gaps, and the consumer's state.
type backupState struct {
	Msgs     []backupMsg
	First    uint64
	Last     uint64
	Deleted  uint64
	Consumer jetstream.ConsumerInfo
}

type backupMsg struct {
	Seq     uint64
	Subject string
	Header  nats.Header
	Data    string
	Time    time.Time
}

// fillForBackup makes ORDERS: ten messages, some with headers, two
// deleted (gaps), and a durable consumer that fetched four and acked three.
func fillForBackup(t *testing.T, ctx context.Context, js jetstream.JetStream) {
	t.Helper()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		m := nats.NewMsg("orders.new")
		if i%2 == 1 {
			m.Subject = "orders.eu.paid"
			m.Header.Set("Order", strings.Repeat("x", i))
			m.Header.Add("Multi", "a")
			m.Header.Add("Multi", "b")
		}
		m.Data = []byte("order " + strings.Repeat("#", i))
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, seq := range []uint64{3, 7} {
		if err := s.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "worker", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(4, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		if n++; n != 3 { // the third (seq 5) stays pending
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n != 4 {
		t.Fatalf("fetched %d, want 4", n)
	}
}

func readBackupState(t *testing.T, ctx context.Context, js jetstream.JetStream) backupState {
	t.Helper()
	s, err := js.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := backupState{First: info.State.FirstSeq, Last: info.State.LastSeq, Deleted: uint64(info.State.NumDeleted)}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // a gap
		}
		st.Msgs = append(st.Msgs, backupMsg{m.Sequence, m.Subject, m.Header, string(m.Data), m.Time.UTC()})
	}
	c, err := s.Consumer(ctx, "worker")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Consumer = jetstream.ConsumerInfo{Delivered: ci.Delivered, AckFloor: ci.AckFloor, NumAckPending: ci.NumAckPending, NumRedelivered: ci.NumRedelivered}
	st.Consumer.Delivered.Last, st.Consumer.AckFloor.Last = nil, nil
	return st
}

// backupRoundTrip backs ORDERS up with the real nats CLI, deletes it,
// restores it, and returns the state before and after.
func backupRoundTrip(t *testing.T, url string) (before, after backupState) {
	t.Helper()
	bin := natsCLI(t)
	ctx := ctxT(t)
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	fillForBackup(t, ctx, js)
	before = readBackupState(t, ctx, js)
	dir := filepath.Join(t.TempDir(), "orders")
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := runCLI(t, cctx, bin, url, "stream", "backup", "ORDERS", dir); err != nil {
		t.Fatalf("nats stream backup: %v\n%s", err, out)
	}
	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, cctx, bin, url, "stream", "restore", dir); err != nil {
		t.Fatalf("nats stream restore: %v\n%s", err, out)
	}
	return before, readBackupState(t, ctx, js)
}

func TestJetStreamBackupRestoreCLI(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store})
	before, after := backupRoundTrip(t, busURL(s))
	if len(before.Msgs) != 8 || before.Deleted != 2 {
		t.Fatalf("before: %d messages, %d deleted", len(before.Msgs), before.Deleted)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("restored differs:\nbefore %+v\nafter  %+v", before, after)
	}
	// What a restore wrote is a store like any other: a restart keeps it.
	shutdown(t, s)
	s2 := startBus(t, server.Options{JetStream: true, StoreDir: store})
	js, err := jetstream.New(connect(t, busURL(s2)))
	if err != nil {
		t.Fatal(err)
	}
	if again := readBackupState(t, ctxT(t), js); !reflect.DeepEqual(before, again) {
		t.Fatalf("restored stream after a restart differs:\nbefore %+v\nafter  %+v", before, again)
	}
}

// The same round trip against the reference: both keep everything, and
// end in the same state (times aside, which each server sets).
func TestJetStreamBackupRestoreCLIDiff(t *testing.T) {
	t.Parallel()
	ref := startReference(t, true)
	refBefore, refAfter := backupRoundTrip(t, ref.ClientURL())
	if !reflect.DeepEqual(refBefore, refAfter) {
		t.Fatalf("reference restored differs:\nbefore %+v\nafter  %+v", refBefore, refAfter)
	}
	s := startBus(t, server.Options{JetStream: true})
	_, busAfter := backupRoundTrip(t, busURL(s))
	for _, st := range []*backupState{&refAfter, &busAfter} {
		for i := range st.Msgs {
			st.Msgs[i].Time = time.Time{}
		}
	}
	if !reflect.DeepEqual(refAfter, busAfter) {
		t.Fatalf("bus and the reference restore differently:\nreference %+v\nbus       %+v", refAfter, busAfter)
	}
}

// nats account backup and restore: every stream, with its consumers.
func TestJetStreamAccountBackupRestoreCLI(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	s := startBus(t, server.Options{JetStream: true})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(ctxT(t), 60*time.Second)
	defer cancel()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	fillForBackup(t, ctx, js)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LOGS", Subjects: []string{"logs.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish(ctx, "logs.app", []byte("line")); err != nil {
			t.Fatal(err)
		}
	}
	before := readBackupState(t, ctx, js)
	dir := filepath.Join(t.TempDir(), "account")
	if out, err := runCLI(t, ctx, bin, url, "account", "backup", dir, "--force"); err != nil {
		t.Fatalf("nats account backup: %v\n%s", err, out)
	}
	for _, name := range []string{"ORDERS", "LOGS"} {
		if err := js.DeleteStream(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := runCLI(t, ctx, bin, url, "account", "restore", dir); err != nil {
		t.Fatalf("nats account restore: %v\n%s", err, out)
	}
	if after := readBackupState(t, ctx, js); !reflect.DeepEqual(before, after) {
		t.Fatalf("ORDERS restored differs:\nbefore %+v\nafter  %+v", before, after)
	}
	logs, err := js.Stream(ctx, "LOGS")
	if err != nil {
		t.Fatal(err)
	}
	if n := logs.CachedInfo().State.Msgs; n != 3 {
		t.Fatalf("LOGS restored with %d messages, want 3", n)
	}
}

// A backup taken while a publisher goes on is a cut: restored elsewhere,
// it holds the stream's messages 1..N, every one, equal, none after a gap.
func TestJetStreamBackupWhilePublishing(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	src, dst := startBus(t, server.Options{JetStream: true}), startBus(t, server.Options{JetStream: true})
	ctx, cancel := context.WithTimeout(ctxT(t), 60*time.Second)
	defer cancel()
	js, err := jetstream.New(connect(t, busURL(src)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := js.Publish(ctx, "orders.new", []byte(strings.Repeat("x", i%100))); err != nil {
				done <- err
				return
			}
		}
	}()
	eventually(t, 10*time.Second, func() bool {
		s, err := js.Stream(ctx, "ORDERS")
		return err == nil && s.CachedInfo().State.Msgs > 200
	})
	dir := filepath.Join(t.TempDir(), "orders")
	out, err := runCLI(t, ctx, bin, busURL(src), "stream", "backup", "ORDERS", dir)
	close(stop)
	if perr := <-done; perr != nil {
		t.Fatal(perr)
	}
	if err != nil {
		t.Fatalf("nats stream backup: %v\n%s", err, out)
	}
	if out, err := runCLI(t, ctx, bin, busURL(dst), "stream", "restore", dir); err != nil {
		t.Fatalf("nats stream restore: %v\n%s", err, out)
	}
	djs, err := jetstream.New(connect(t, busURL(dst)))
	if err != nil {
		t.Fatal(err)
	}
	restored, err := djs.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := js.Stream(ctx, "ORDERS")
	st := restored.CachedInfo().State
	if st.FirstSeq != 1 || st.Msgs != st.LastSeq || st.Msgs < 200 {
		t.Fatalf("restored state %+v: want messages 1..N without gaps", st)
	}
	for seq := uint64(1); seq <= st.LastSeq; seq++ {
		a, err1 := orig.GetMsg(ctx, seq)
		b, err2 := restored.GetMsg(ctx, seq)
		if err1 != nil || err2 != nil || string(a.Data) != string(b.Data) || !a.Time.Equal(b.Time) {
			t.Fatalf("seq %d differs: %v %v", seq, err1, err2)
		}
	}
}
