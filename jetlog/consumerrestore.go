package jetlog

import "sort"

// Restore replaces the state with one taken elsewhere (a backup): the
// delivered and ack-floor pairs and the pending entries with their
// consumer seqs, delivery counts and deadlines. It is written as the
// ordinary journal changes that lead there (a reset to the ack floor, a
// delivery and ack of the floor itself, then each pending delivery, then
// the last delivery), so a journal replays it like any other step and
// no record kind is added to the disk format.
func (s *ConsumerState) Restore(delivered, ackFloor SeqPair, pending []Pending) {
	s.apply(consumerOp{kind: kindReset, stream: ackFloor.Stream})
	if ackFloor.Consumer > 0 && ackFloor.Stream > 0 {
		s.apply(consumerOp{kind: kindDelivered, stream: ackFloor.Stream, consumer: ackFloor.Consumer, deliveries: 1})
		s.apply(consumerOp{kind: kindAcked, stream: ackFloor.Stream})
	}
	ps := append([]Pending(nil), pending...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Stream < ps[j].Stream })
	for _, p := range ps {
		if p.Stream <= ackFloor.Stream {
			continue
		}
		s.apply(consumerOp{kind: kindDelivered, stream: p.Stream, consumer: p.Consumer, deliveries: max(p.Deliveries, 1), deadline: p.Deadline})
	}
	if delivered.Stream > s.Delivered.Stream || delivered.Consumer > s.Delivered.Consumer {
		if _, ok := s.Pending[delivered.Stream]; !ok && delivered.Stream > ackFloor.Stream {
			s.apply(consumerOp{kind: kindDelivered, stream: delivered.Stream, consumer: delivered.Consumer, deliveries: 1})
			s.apply(consumerOp{kind: kindAcked, stream: delivered.Stream})
		}
	}
}
