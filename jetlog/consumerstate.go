package jetlog

import (
	"cmp"
	"slices"
	"time"
)

// SeqPair is a position in both the stream and a consumer's delivery
// sequence.
type SeqPair struct {
	Consumer uint64 `msgpack:"c"`
	Stream   uint64 `msgpack:"s"`
}

// Pending is a delivered, not yet acknowledged message.
type Pending struct {
	Stream     uint64 `msgpack:"s"` // stream seq
	Consumer   uint64 `msgpack:"c"` // consumer seq of the latest delivery
	Deliveries uint64 `msgpack:"n"` // 1 on first delivery
	Deadline   int64  `msgpack:"d"` // unix ns after which it is redelivered
}

// ConsumerState is a durable consumer's delivery state: what was
// delivered, the ack floor, and the pending set with delivery counts and
// redelivery deadlines. It is a plain value driven by calls; time comes
// from the injected clock. It is not safe for concurrent use (Consumer
// wraps it with a lock and a journal). A state made by NewConsumerState
// keeps nothing but the state itself; inside a Consumer every change is
// also recorded so it can be journaled.
type ConsumerState struct {
	Delivered SeqPair             // last delivery
	AckFloor  SeqPair             // everything at or below is acknowledged
	Pending   map[uint64]*Pending // by stream seq; an entry is reused once its seq leaves
	// GivenUp holds the seqs whose deliveries ran out (GiveUp) without
	// an ack, with their delivery counts: no longer pending, yet not
	// acknowledged either, as the reference keeps them (under the ack
	// floor while anything else is pending, and in the redelivered
	// count until acked). nil while there are none.
	GivenUp map[uint64]uint64

	ackWait time.Duration
	backoff []time.Duration
	now     func() time.Time
	record  bool         // keep ops for a journal (set by Consumer)
	ops     []consumerOp // changes not yet journaled
	// free holds entries of acked seqs for later deliveries to reuse,
	// so a delivery allocates nothing once the pending set has been as
	// large (see BenchmarkMachineFetchJournaled): a *Pending read from
	// Pending is good until its seq leaves the set.
	free []*Pending
	// inStep is set for the length of one journaled step
	// (Consumer.updateSync), whose changes all happen at one instant,
	// stepNow, read once: a pull's deliveries get one deadline, which
	// its delivered run records as zero deltas (a byte each), and one
	// clock reading.
	inStep  bool
	stepNow time.Time
}

// maxFreePending bounds the entries kept for reuse.
const maxFreePending = 1024

// consumerOp is one journaled change. Replaying the ops of a state in
// order rebuilds it.
type consumerOp struct {
	kind       byte
	stream     uint64
	consumer   uint64
	deliveries uint64
	deadline   int64
}

// Journal record kinds of a consumer. Part of the disk format (see
// doc.go): never renumber.
const (
	kindDelivered byte = 16 // pending[stream] = {consumer, deliveries, deadline}
	kindAcked     byte = 17 // stream acked (or terminated)
	kindAckedAll  byte = 18 // every pending seq <= stream acked
	kindDeadline  byte = 19 // pending[stream].deadline = deadline
	// kindReset starts the consumer over at stream seq+1 (consumer.go's
	// Reset): nothing pending, delivered and ack floor {0, stream}. Kinds
	// 20 and 21 are the run records (consumerrecord.go).
	kindReset byte = 22
	// kindGivenUp moves pending[stream] to the given-up set (GiveUp).
	kindGivenUp byte = 23
)

// NewConsumerState returns an empty state. ackWait is the redelivery
// delay; backoff, when set, overrides it per delivery count (the last
// value repeats); now nil means time.Now.
func NewConsumerState(ackWait time.Duration, backoff []time.Duration, now func() time.Time) ConsumerState {
	if now == nil {
		now = time.Now
	}
	return ConsumerState{Pending: map[uint64]*Pending{}, ackWait: ackWait, backoff: backoff, now: now}
}

func (s *ConsumerState) wait(deliveries uint64) time.Duration {
	if len(s.backoff) > 0 {
		i := min(int(deliveries)-1, len(s.backoff)-1)
		return s.backoff[max(i, 0)]
	}
	return s.ackWait
}

// Deliver records a delivery of stream seq: a first delivery (seq above
// every one delivered before) or a redelivery of a pending seq. It returns
// the new pending entry (a copy).
func (s *ConsumerState) Deliver(seq uint64) Pending {
	p, ok := s.Pending[seq]
	deliveries := uint64(1)
	if ok {
		deliveries = p.Deliveries + 1
	}
	op := consumerOp{
		kind:       kindDelivered,
		stream:     seq,
		consumer:   s.Delivered.Consumer + 1,
		deliveries: deliveries,
		deadline:   s.clock().Add(s.wait(deliveries)).UnixNano(),
	}
	s.apply(op)
	return *s.Pending[seq]
}

// DeliverAcked is Deliver and Ack of seq at once (ack policy none), with
// the same changes recorded, but when nothing else is pending the entry
// never enters the pending set: an ordered consumer's delivery costs no
// map insert and delete (see BenchmarkJetStreamConsume/kind=ordered in
// tests). It returns the delivery's entry.
func (s *ConsumerState) DeliverAcked(seq uint64) Pending {
	if len(s.Pending) > 0 {
		p := s.Deliver(seq)
		s.Ack(seq)
		return p
	}
	op := consumerOp{kind: kindDelivered, stream: seq, consumer: s.Delivered.Consumer + 1, deliveries: 1,
		deadline: s.clock().Add(s.wait(1)).UnixNano()}
	if s.record {
		s.ops = append(s.ops, op, consumerOp{kind: kindAcked, stream: seq})
	}
	// What replaying the two changes leaves (see replay, updateFloor).
	s.Delivered = SeqPair{Consumer: max(s.Delivered.Consumer, op.consumer), Stream: max(s.Delivered.Stream, seq)}
	s.AckFloor = SeqPair{Consumer: s.Delivered.Consumer, Stream: max(s.Delivered.Stream, s.AckFloor.Stream)}
	return Pending{Stream: seq, Consumer: op.consumer, Deliveries: 1, Deadline: op.deadline}
}

// Ack acknowledges seq and reports whether it was pending. A seq that
// was given up on (GiveUp) is acknowledged too, leaving the given-up
// set, but was not pending.
func (s *ConsumerState) Ack(seq uint64) bool {
	if _, ok := s.Pending[seq]; !ok {
		if _, given := s.GivenUp[seq]; given {
			s.apply(consumerOp{kind: kindAcked, stream: seq})
		}
		return false
	}
	s.apply(consumerOp{kind: kindAcked, stream: seq})
	return true
}

// GiveUp takes pending seq out of the pending set without acknowledging
// it: its deliveries ran out (max_deliver). It is not redelivered, and
// it stays in GivenUp until it is acked, holding the ack floor below it
// while other seqs are pending (the ack that leaves nothing pending
// moves the floor to the last delivery). It reports whether seq was
// pending.
func (s *ConsumerState) GiveUp(seq uint64) bool {
	if _, ok := s.Pending[seq]; !ok {
		return false
	}
	s.apply(consumerOp{kind: kindGivenUp, stream: seq})
	return true
}

// AckAll acknowledges every pending seq up to and including seq (ack
// policy all) and returns how many were pending.
func (s *ConsumerState) AckAll(seq uint64) int {
	n := 0
	for p := range s.Pending {
		if p <= seq {
			n++
		}
	}
	if n > 0 || seq > s.AckFloor.Stream {
		s.apply(consumerOp{kind: kindAckedAll, stream: seq})
	}
	return n
}

// Reset starts the consumer over before stream seq next (seq >= 1):
// nothing is pending any more, and the next delivery is consumer seq 1
// of stream seq next or the first after it, as the reference's consumer
// reset does. Unlike every other change it may move the floors down.
func (s *ConsumerState) Reset(next uint64) {
	s.apply(consumerOp{kind: kindReset, stream: max(next, 1) - 1})
}

// Term stops redelivery of seq; it counts as handled.
func (s *ConsumerState) Term(seq uint64) bool { return s.Ack(seq) }

// Nak asks for redelivery of seq after delay (zero: at once).
func (s *ConsumerState) Nak(seq uint64, delay time.Duration) bool {
	if _, ok := s.Pending[seq]; !ok {
		return false
	}
	s.apply(consumerOp{kind: kindDeadline, stream: seq, deadline: s.clock().Add(delay).UnixNano()})
	return true
}

// InProgress restarts the ack wait of seq.
func (s *ConsumerState) InProgress(seq uint64) bool {
	p, ok := s.Pending[seq]
	if !ok {
		return false
	}
	s.apply(consumerOp{kind: kindDeadline, stream: seq, deadline: s.clock().Add(s.wait(p.Deliveries)).UnixNano()})
	return true
}

// Due returns the pending seqs whose deadline has passed, in redelivery
// order: earliest deadline first, then lowest seq. The slice is the
// caller's.
func (s *ConsumerState) Due() []uint64 {
	now := s.clock().UnixNano()
	var due []*Pending
	for _, p := range s.Pending {
		if p.Deadline <= now {
			due = append(due, p)
		}
	}
	slices.SortFunc(due, func(a, b *Pending) int {
		return cmp.Or(cmp.Compare(a.Deadline, b.Deadline), cmp.Compare(a.Stream, b.Stream))
	})
	out := make([]uint64, len(due))
	for i, p := range due {
		out[i] = p.Stream
	}
	return out
}

// NumRedelivered counts pending messages delivered more than once, and
// the given-up ones that were.
func (s *ConsumerState) NumRedelivered() int {
	n := 0
	for _, p := range s.Pending {
		if p.Deliveries > 1 {
			n++
		}
	}
	for _, deliveries := range s.GivenUp {
		if deliveries > 1 {
			n++
		}
	}
	return n
}

// clock is the time of a change: the step's, inside a journaled step.
func (s *ConsumerState) clock() time.Time {
	if !s.inStep {
		return s.now()
	}
	if s.stepNow.IsZero() {
		s.stepNow = s.now()
	}
	return s.stepNow
}

// apply makes one change and, for a journaled state, records it.
func (s *ConsumerState) apply(op consumerOp) {
	s.replay(op)
	if s.record {
		s.ops = append(s.ops, op)
	}
}

// replay makes one change without recording it.
func (s *ConsumerState) replay(op consumerOp) {
	switch op.kind {
	case kindDelivered:
		p := s.Pending[op.stream]
		if p == nil {
			p = s.newPending()
			s.Pending[op.stream] = p
		}
		*p = Pending{Stream: op.stream, Consumer: op.consumer, Deliveries: op.deliveries, Deadline: op.deadline}
		s.Delivered.Consumer = max(s.Delivered.Consumer, op.consumer)
		s.Delivered.Stream = max(s.Delivered.Stream, op.stream)
	case kindAcked:
		s.remove(op.stream)
		if s.GivenUp != nil {
			delete(s.GivenUp, op.stream)
		}
	case kindGivenUp:
		p, ok := s.Pending[op.stream]
		if !ok {
			return
		}
		if s.GivenUp == nil {
			s.GivenUp = map[uint64]uint64{}
		}
		s.GivenUp[op.stream] = p.Deliveries
		s.remove(op.stream)
		return // giving up moves no floor, even when nothing is left pending
	case kindAckedAll:
		for seq := range s.Pending {
			if seq <= op.stream {
				s.remove(seq)
			}
		}
		s.AckFloor.Stream = max(s.AckFloor.Stream, op.stream)
	case kindDeadline:
		if p, ok := s.Pending[op.stream]; ok {
			p.Deadline = op.deadline
		}
		return // the pending set is unchanged
	case kindReset:
		for seq := range s.Pending {
			s.remove(seq)
		}
		s.GivenUp = nil
		s.Delivered = SeqPair{Stream: op.stream}
		s.AckFloor = SeqPair{Stream: op.stream}
		return
	}
	if op.kind == kindDelivered && len(s.Pending) > 1 {
		return // a later delivery never lowers the lowest pending seq
	}
	s.updateFloor()
}

// newPending takes an entry to reuse, or a new one.
func (s *ConsumerState) newPending() *Pending {
	if n := len(s.free); n > 0 {
		p := s.free[n-1]
		s.free = s.free[:n-1]
		return p
	}
	return new(Pending)
}

// remove takes seq out of the pending set, keeping its entry for reuse.
func (s *ConsumerState) remove(seq uint64) {
	p, ok := s.Pending[seq]
	if !ok {
		return
	}
	delete(s.Pending, seq)
	if len(s.free) < maxFreePending {
		s.free = append(s.free, p)
	}
}

// updateFloor moves the ack floor up to just below the lowest pending seq.
// see BenchmarkConsumerAck
func (s *ConsumerState) updateFloor() {
	if len(s.Pending) == 0 {
		s.AckFloor = SeqPair{Consumer: s.Delivered.Consumer, Stream: max(s.Delivered.Stream, s.AckFloor.Stream)}
		return
	}
	low := s.lowestPending()
	if len(s.GivenUp) > 0 && s.givenUpBelow(low.Stream) {
		return // held below a given-up seq while anything is pending
	}
	// Never above Delivered: after a lost snapshot the stream is delivered
	// again from the start, and nothing below it is known to be acked.
	s.AckFloor.Stream = max(s.AckFloor.Stream, min(low.Stream-1, s.Delivered.Stream))
	s.AckFloor.Consumer = max(s.AckFloor.Consumer, low.Consumer-1)
}

// givenUpBelow reports whether a given-up seq lies between the ack
// floor and seq.
func (s *ConsumerState) givenUpBelow(seq uint64) bool {
	for g := range s.GivenUp {
		if g > s.AckFloor.Stream && g < seq {
			return true
		}
	}
	return false
}

// lowestPending finds the pending entry with the lowest stream seq. Acks
// mostly arrive in order, so it walks up from the ack floor, where the
// answer usually is; past len(Pending) steps a scan of the set is cheaper.
func (s *ConsumerState) lowestPending() *Pending {
	for seq, steps := s.AckFloor.Stream+1, 0; seq <= s.Delivered.Stream && steps <= len(s.Pending); seq, steps = seq+1, steps+1 {
		if p, ok := s.Pending[seq]; ok {
			return p
		}
	}
	var low *Pending
	for _, p := range s.Pending {
		if low == nil || p.Stream < low.Stream {
			low = p
		}
	}
	return low
}
