package jetlog

import (
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// A reset starts the consumer over: nothing pending, the floors at the
// seq before the new start (lower than before), the next delivery
// consumer seq 1; and a crash right after keeps exactly that.
func TestConsumerResetSurvivesCrash(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	c, err := l.OpenConsumer("R", ConsumerConfig{AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 5; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	for _, seq := range []uint64{1, 2, 3} {
		if _, err := c.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Apply(func(s *ConsumerState) error { s.Reset(2); return nil }); err != nil {
		t.Fatal(err)
	}
	check := func(c *Consumer, when string) {
		t.Helper()
		info := c.Info()
		if info.Delivered != (SeqPair{Stream: 1}) || info.AckFloor != (SeqPair{Stream: 1}) || info.NumAckPending != 0 {
			t.Fatalf("%s: %+v, want delivered and ack floor {0 1}, nothing pending", when, info)
		}
	}
	check(c, "after the reset")
	crashed := fsys.CrashClone(nil) // Apply returns once synced
	p, err := c.Deliver(2)
	if err != nil || p.Consumer != 1 || p.Deliveries != 1 {
		t.Fatalf("first delivery after the reset: %+v, %v; want consumer seq 1, first delivery", p, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l2 := openConsumerLog(t, crashed, clock)
	defer l2.Close() //nolint:errcheck
	c2, err := l2.OpenConsumer("R", ConsumerConfig{AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close() //nolint:errcheck
	check(c2, "after a crash")
	if got := c2.PendingSeqs(); len(got) != 0 {
		t.Fatalf("pending after a crash: %v", got)
	}
}
