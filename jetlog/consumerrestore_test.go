package jetlog

import (
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// restoredView is a state's delivered and ack-floor pairs and its
// pending entries by value.
type restoredView struct {
	Delivered, AckFloor SeqPair
	Pending             map[uint64]Pending
}

func restoreView(t *testing.T, c *Consumer) restoredView {
	t.Helper()
	var v restoredView
	if err := c.Apply(func(s *ConsumerState) error {
		v = restoredView{s.Delivered, s.AckFloor, map[uint64]Pending{}}
		for seq, p := range maps.All(s.Pending) {
			v.Pending[seq] = *p
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// A state given to Restore is the consumer's, exactly (consumer seqs,
// delivery counts, deadlines), and it is journaled: a crash keeps it.
func TestConsumerStateRestore(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l := openConsumerLog(t, fsys, clock)
	src, err := l.OpenConsumer("SRC", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Deliver 1..9 (2 and 7 are gaps in the stream), ack some, redeliver 5.
	for _, seq := range []uint64{1, 3, 4, 5, 6, 8, 9} {
		if _, err := src.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	for _, seq := range []uint64{1, 3, 6, 9} {
		if _, err := src.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Deliver(5); err != nil {
		t.Fatal(err)
	}
	want := restoreView(t, src)
	if len(want.Pending) != 3 || want.Pending[5].Deliveries != 2 {
		t.Fatalf("source state %+v", want)
	}
	dst, err := l.OpenConsumer("DST", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Apply(func(s *ConsumerState) error {
		s.Restore(want.Delivered, want.AckFloor, slicesOf(want.Pending))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := restoreView(t, dst); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %+v, want %+v", got, want)
	}
	crashed := fsys.CrashClone(nil)
	_ = src.Close()
	_ = dst.Close()
	_ = l.Close()
	l2 := openConsumerLog(t, crashed, clock)
	defer l2.Close() //nolint:errcheck
	c2, err := l2.OpenConsumer("DST", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close() //nolint:errcheck
	if got := restoreView(t, c2); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a crash %+v, want %+v", got, want)
	}
}

func slicesOf(m map[uint64]Pending) []Pending {
	out := make([]Pending, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	return out
}
