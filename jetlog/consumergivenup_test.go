package jetlog

import (
	"path"
	"slices"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// TestConsumerGivenUpSurvivesReopen: a seq given up on (max_deliver)
// leaves the pending set but holds the ack floor below it while anything
// else is pending, stays given up across a reopen from the journal and
// from a snapshot, and leaves the set only when acked.
func TestConsumerGivenUpSurvivesReopen(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	cfg := ConsumerConfig{AckWait: time.Second}
	c, err := l.OpenConsumer("G", cfg)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 4; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	ack := func(c *Consumer, seq uint64) {
		t.Helper()
		if _, err := c.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	ack(c, 1)
	if err := c.Apply(func(s *ConsumerState) error { s.GiveUp(2); return nil }); err != nil {
		t.Fatal(err)
	}
	ack(c, 3)
	want := ConsumerInfo{Delivered: SeqPair{4, 4}, AckFloor: SeqPair{1, 1}, NumAckPending: 1, NumGivenUp: 1}
	if got := c.Info(); got != want {
		t.Fatalf("info = %+v, want %+v", got, want)
	}
	reopen := func(c *Consumer, l *Log) (*Consumer, *Log) {
		t.Helper()
		crashed := fsys.CrashClone(nil)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		fsys = crashed
		l = openConsumerLog(t, fsys, clock)
		c, err := l.OpenConsumer("G", cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c, l
	}
	c, l = reopen(c, l) // from the journal
	if got := c.Info(); got != want {
		t.Fatalf("info after reopen = %+v, want %+v", got, want)
	}
	// Enough deliveries and acks to write a snapshot.
	for seq := uint64(5); seq <= 2000; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
		ack(c, seq)
	}
	want.Delivered = SeqPair{2000, 2000}
	if got := c.Info(); got != want {
		t.Fatalf("info = %+v, want %+v", got, want)
	}
	if names, _ := fsys.ReadDir(path.Join("/s", consumersDir, "G")); !slices.Contains(names, snapFile) {
		t.Fatalf("no snapshot: %v", names)
	}
	c, l = reopen(c, l) // from the snapshot
	defer l.Close()     //nolint:errcheck
	defer c.Close()     //nolint:errcheck
	if got := c.Info(); got != want || len(c.Corrupt()) != 0 {
		t.Fatalf("info after snapshot = %+v, want %+v (%v)", got, want, c.Corrupt())
	}
	ack(c, 4) // nothing else pending: the floor goes to the last delivery
	want = ConsumerInfo{Delivered: SeqPair{2000, 2000}, AckFloor: SeqPair{2000, 2000}, NumGivenUp: 1}
	if got := c.Info(); got != want {
		t.Fatalf("info after the last pending ack = %+v, want %+v", got, want)
	}
	ack(c, 2) // the late ack takes it out of the given-up set
	if got := c.Info(); got.NumGivenUp != 0 {
		t.Fatalf("still given up after its ack: %+v", got)
	}
}
