package tests

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A full disk under one stream (every write to its files fails with
// ENOSPC, half-written) must stay that stream's problem: its publishes
// are refused with the reference's 10047 and nothing acknowledged is
// lost, the other stream keeps accepting and serving, reads and infos of
// the full one still work, and once there is room again it accepts
// publishes without a restart, with no seq skipped. After a restart
// every acknowledged message of both streams reads back as published,
// and recovery reports no loss.
func TestFullDiskForOneStream(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	ffs := newFaultFS()
	logger, logs := newLogBuffer()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store, StoreFS: ffs, Logger: logger})
	js := jsClient(t, s)
	ctx := ctxT(t)
	acked := map[string]map[uint64]string{"A": {}, "B": {}}
	publish := func(stream string, i int) error {
		payload := fmt.Sprintf("%s-%d", stream, i)
		ack, err := js.Publish(ctx, "s"+stream+".x", []byte(payload))
		if err == nil {
			acked[stream][ack.Sequence] = payload
		}
		return err
	}
	for _, name := range []string{"A", "B"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"s" + name + ".>"}}); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if err := publish(name, i); err != nil {
				t.Fatal(err)
			}
		}
	}
	cons, err := mustStream(t, js, "A").CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}

	ffs.set(filepath.Join(store, "jetstream", "A"), syscall.ENOSPC)
	for i := range 5 {
		err := publish("A", 100+i)
		if code := apiCode(err); code != 10047 {
			t.Fatalf("publish to the full stream: %v (code %d), want 10047 insufficient storage", err, code)
		}
	}
	if len(logs.lines("level=ERROR", "stream writes failing", "stream=A", "no space left on device")) != 1 {
		t.Fatalf("the full disk was not logged once: %q", logs.lines("stream writes failing"))
	}
	// The other stream neither notices nor slows down.
	for i := range 20 {
		if err := publish("B", 100+i); err != nil {
			t.Fatalf("publish to the stream with room: %v", err)
		}
	}
	if m, err := mustStream(t, js, "B").GetMsg(ctx, 30); err != nil || string(m.Data) != acked["B"][30] {
		t.Fatalf("read from the stream with room: %v", err)
	}
	// The full stream is still read: its info, its messages, its
	// consumer's deliveries.
	infoA, err := mustStream(t, js, "A").Info(ctx)
	if err != nil || infoA.State.Msgs != 20 || infoA.State.LastSeq != 20 {
		t.Fatalf("info of the full stream: %+v, %v", infoA, err)
	}
	if m, err := mustStream(t, js, "A").GetMsg(ctx, 7); err != nil || string(m.Data) != acked["A"][7] {
		t.Fatalf("read from the full stream: %v", err)
	}
	// (Before the fix in ledger.go the consumer delivered nothing here:
	// its delivery step's journal write failed and the deliveries were
	// withheld, though its state had them as pending.)
	batch, err := cons.Fetch(5, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range batch.Messages() {
		got++
		// An ack may not be recorded while the disk is full; whatever
		// happens to it, the message is not lost (at worst delivered
		// again).
		_ = m.Ack()
	}
	if got != 5 {
		t.Fatalf("fetched %d of 5 from the full stream", got)
	}

	// Room again: the next publish is taken, without a restart, and gets
	// the next seq (the refused ones used none).
	ffs.set(filepath.Join(store, "jetstream", "A"), nil)
	for i := range 10 {
		if err := publish("A", 200+i); err != nil {
			t.Fatalf("publish after the disk has room again: %v", err)
		}
	}
	if len(logs.lines("stream writes again", "stream=A")) != 1 {
		t.Fatal("the recovery was not logged")
	}
	for seq := uint64(1); seq <= 30; seq++ {
		if _, ok := acked["A"][seq]; !ok {
			t.Fatalf("seq %d was not assigned to an acknowledged publish (the refused ones took seqs?)", seq)
		}
	}
	batch, err = cons.Fetch(25, jetstream.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatalf("ack after the disk has room again: %v", err)
		}
	}
	shutdown(t, s)

	s2 := startBus(t, server.Options{JetStream: true, StoreDir: store, Logger: logger})
	js2 := jsClient(t, s2)
	checkAcked(ctx, t, js2, "A", acked["A"])
	checkAcked(ctx, t, js2, "B", acked["B"])
	// The consumer's journal caught up: every ack, those made while the
	// disk was full included, is there.
	ci, err := mustStream(t, js2, "A").Consumer(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	if info := ci.CachedInfo(); info.AckFloor.Stream != 30 || info.NumAckPending != 0 || info.NumPending != 0 {
		t.Fatalf("consumer after the restart: ack floor %d, ack pending %d, pending %d; want 30, 0, 0",
			info.AckFloor.Stream, info.NumAckPending, info.NumPending)
	}
	if lost := logs.lines("messages lost"); len(lost) > 0 {
		t.Fatalf("recovery reported a loss after a full disk: %q", lost)
	}
	if cerr := logs.lines("level=ERROR", "corrupt"); len(cerr) > 0 {
		t.Fatalf("corruption after a full disk: %q", cerr)
	}
}

// checkAcked fails unless stream holds exactly the acknowledged messages
// in acked, each with its payload.
func checkAcked(ctx context.Context, t *testing.T, js jetstream.JetStream, stream string, acked map[uint64]string) {
	t.Helper()
	st := mustStream(t, js, stream)
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(acked)) {
		t.Errorf("stream %s holds %d messages, %d were acknowledged", stream, info.State.Msgs, len(acked))
	}
	for seq, payload := range acked {
		m, err := st.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != payload {
			t.Errorf("stream %s: acknowledged seq %d (%q) lost: %v", stream, seq, payload, err)
		}
	}
	var apiErr *jetstream.APIError
	if _, err := st.GetMsg(ctx, info.State.LastSeq+1); !errors.As(err, &apiErr) && !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("stream %s: a message past the last seq: %v", stream, err)
	}
}
