package jetstream

import (
	"github.com/bus-dev/bus/jetlog"
)

// A push delivery that no subscriber of the deliver subject may receive
// (bus's stored-read rule, docs/security.md: a subscriber whose
// subscribe rights do not cover the stored message's subject) would be
// dropped by the core. Counted as delivered, it would be redelivered to
// nobody until max_deliver ran out. Instead it is not delivered at all:
// nothing is recorded, no delivery count is spent. Without a dead-letter
// subject the consumer waits at it, as it waits while nobody listens,
// keeping its order, until a subscriber that may receive it listens (the
// deliver subject's interest changes, or the next step finds one); with
// one, the message is dead-lettered at once (reason "refused") and
// delivery goes on after it. Message groups always wait: the group's
// next message must follow it. With reference_stored_reads nothing is
// refused here (Core.MayDeliver), as the reference counts the delivery.
// A push consumer whose subscribers have no permissions asks nothing per
// message (Core.FiltersStored, once a step).

// reasonRefused is the Bus-Dlq-Reason of a message dead-lettered because
// no subscriber of the deliver subject may receive it (docs/api.md).
const reasonRefused = "refused"

// refusePush handles candidate msg (taken from from) that no push
// subscriber may receive, and reports whether the gather may go on past
// it (it was dead-lettered) or must stop (it was put back to wait).
func (m *machine) refusePush(msg jetlog.Msg, from int) bool {
	m.act.refused = msg.Seq
	if m.cfg.DeadLetterSubject == "" || m.groups != nil {
		m.putBack(msg.Seq, from)
		return false
	}
	m.act.refusedDead = true
	var deliveries uint64
	if from == fromDue {
		// Delivered before, when someone could take it: it is pending,
		// and handed on as acknowledged, as a dead letter is.
		released := false
		err := m.ledger.Update(func(s *jetlog.ConsumerState) {
			if p := s.Pending[msg.Seq]; p != nil {
				deliveries = p.Deliveries
			}
			released = s.Ack(msg.Seq)
		}, false)
		if err != nil || !released {
			m.act.err = err
			return err == nil
		}
	}
	m.sendDeadLetter(msg.Seq, deliveries, reasonRefused, "")
	return true
}

// logRefused logs a refused push delivery: each dead-lettered one, and
// the one the consumer waits at once.
func (c *consumer) logRefused(a actions) {
	switch {
	case a.refused == 0:
	case a.refusedDead:
		c.sh.log.Warn("push delivery refused: no subscriber of the deliver subject may receive it; dead-lettered",
			"stream", c.stream, "consumer", c.name, "seq", a.refused, "deliver_subject", c.cfg.DeliverSubject)
	case a.refused != c.waitingAt:
		c.waitingAt = a.refused
		c.sh.log.Warn("push delivery refused: no subscriber of the deliver subject may receive it; the consumer waits",
			"stream", c.stream, "consumer", c.name, "seq", a.refused, "deliver_subject", c.cfg.DeliverSubject)
	}
}
