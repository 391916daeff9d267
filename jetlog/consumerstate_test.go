package jetlog

import (
	"slices"
	"testing"
	"time"
)

func TestConsumerStateDeliverAckRedeliver(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	s := NewConsumerState(time.Second, nil, clock.Now)
	for seq := uint64(1); seq <= 4; seq++ {
		if p := s.Deliver(seq); p.Consumer != seq || p.Deliveries != 1 {
			t.Fatalf("Deliver(%d) = %+v", seq, p)
		}
	}
	if !s.Ack(1) || s.Ack(1) {
		t.Fatal("ack 1 twice")
	}
	if s.AckFloor != (SeqPair{Consumer: 1, Stream: 1}) {
		t.Fatalf("floor = %+v", s.AckFloor)
	}
	s.Ack(3)
	if s.AckFloor.Stream != 1 {
		t.Fatalf("floor moved past pending 2: %+v", s.AckFloor)
	}
	clock.Advance(500 * time.Millisecond)
	s.InProgress(2)
	s.Nak(4, 100*time.Millisecond)
	if due := s.Due(); len(due) != 0 {
		t.Fatalf("due too early: %v", due)
	}
	clock.Advance(600 * time.Millisecond) // 4 due at 0.6s, 2 due at 1.5s
	if due := s.Due(); !slices.Equal(due, []uint64{4}) {
		t.Fatalf("due = %v", due)
	}
	clock.Advance(time.Second)
	if due := s.Due(); !slices.Equal(due, []uint64{4, 2}) {
		t.Fatalf("due order = %v, want earliest deadline first", due)
	}
	if p := s.Deliver(2); p.Deliveries != 2 || p.Consumer != 5 {
		t.Fatalf("redeliver = %+v", p)
	}
	if s.NumRedelivered() != 1 {
		t.Fatal("redelivered count")
	}
	if n := s.AckAll(4); n != 2 || len(s.Pending) != 0 || s.AckFloor != (SeqPair{Consumer: 5, Stream: 4}) {
		t.Fatalf("AckAll = %d, pending %v, floor %+v", n, s.Pending, s.AckFloor)
	}
}

func TestConsumerStateBackoff(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	s := NewConsumerState(time.Minute, []time.Duration{time.Second, 5 * time.Second}, clock.Now)
	start := clock.Now()
	for i, want := range []time.Duration{time.Second, 5 * time.Second, 5 * time.Second} {
		p := s.Deliver(1)
		if got := time.Unix(0, p.Deadline).Sub(start); got != want {
			t.Fatalf("delivery %d deadline +%v, want +%v", i+1, got, want)
		}
	}
}

func TestConsumerStateInMemoryKeepsNoJournal(t *testing.T) {
	t.Parallel()
	s := NewConsumerState(time.Second, nil, newFakeClock().Now)
	for seq := uint64(1); seq <= 1000; seq++ {
		s.Deliver(seq)
		s.Ack(seq)
	}
	if len(s.ops) != 0 {
		t.Fatalf("in-memory state recorded %d journal ops", len(s.ops))
	}
}

// TestConsumerStateDeliveryAllocatesNothing: once the pending set has
// been as large, a delivery reuses the entry of an acked seq (see
// ConsumerState.free).
func TestConsumerStateDeliveryAllocatesNothing(t *testing.T) {
	s := NewConsumerState(time.Second, nil, newFakeClock().Now)
	seq := uint64(0)
	step := func() {
		for range 100 {
			seq++
			s.Deliver(seq)
		}
		for i := seq - 99; i <= seq; i++ {
			s.Ack(i)
		}
	}
	step()
	if n := testing.AllocsPerRun(20, step); n != 0 {
		t.Fatalf("%v allocations for 100 deliveries and acks", n)
	}
	if len(s.Pending) != 0 || s.AckFloor.Stream != seq {
		t.Fatalf("pending %d, floor %+v", len(s.Pending), s.AckFloor)
	}
}

// TestConsumerStateDeliverAckedIsDeliverAndAck: DeliverAcked leaves the
// state Deliver and Ack leave, records the same changes, and returns the
// same entry, with and without other seqs pending.
func TestConsumerStateDeliverAckedIsDeliverAndAck(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	fast := NewConsumerState(time.Second, nil, clock.Now)
	slow := NewConsumerState(time.Second, nil, clock.Now)
	fast.record, slow.record = true, true
	for seq := uint64(1); seq <= 300; seq++ {
		switch {
		case seq%50 == 7: // one left pending for a while
			fast.Deliver(seq)
			slow.Deliver(seq)
		case seq%50 == 20:
			fast.Ack(seq - 13)
			slow.Ack(seq - 13)
		case seq%90 == 0:
			fast.Reset(seq + 3)
			slow.Reset(seq + 3)
			seq += 2
		default:
			got := fast.DeliverAcked(seq)
			want := slow.Deliver(seq)
			slow.Ack(seq)
			if got != want {
				t.Fatalf("seq %d: entry %+v, want %+v", seq, got, want)
			}
		}
		clock.Advance(time.Millisecond)
		if !sameView(viewOf(&fast), viewOf(&slow)) || !slices.Equal(fast.ops, slow.ops) {
			t.Fatalf("seq %d: state or changes differ: %+v %+v / %+v %+v", seq, fast.Delivered, fast.AckFloor, slow.Delivered, slow.AckFloor)
		}
	}
}
