package jetstream

import (
	"strconv"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// pushBatch is how many messages one step hands a push subscriber
// before the consumer looks at its other inputs again.
const pushBatch = 256

// Where a candidate message comes from; a message not sent after all is
// put back where it came from.
const (
	fromDue     = iota // a redelivery
	fromInitial        // a last_per_subject start message
	fromNew            // the next message not yet delivered
	fromReady          // a held-back message whose group freed up (machinegroups.go)
)

// collectDue moves the redeliveries whose deadline has passed from the
// heap to the due list, and dead-letters at once those that have had
// max_deliver deliveries (the reference waits for the next pull). It
// drops stale entries from the top of the heap, so the next deadline is a
// live one.
func (m *machine) collectDue(now time.Time) {
	if m.redeliver.Len() == 0 {
		return
	}
	m.scratch.cut = now.UnixNano()
	m.scratch.exhausted = m.scratch.exhausted[:0]
	_ = m.ledger.Update(m.collectStep, false)
	for _, e := range m.scratch.exhausted {
		m.deadLetter(e.seq, e.deliveries, "max_deliveries", "", now)
	}
	if m.redeliver.Len() > 64 && m.redeliver.Len() > 4*m.ledger.NumAckPending() {
		m.compactDeadlines()
	}
}

// collectLocked is collectDue's ledger step.
func (m *machine) collectLocked(s *jetlog.ConsumerState) {
	for {
		d, ok := m.redeliver.peek()
		if !ok {
			return
		}
		p := s.Pending[d.seq]
		live := p != nil && p.Deadline == d.at
		if live && d.at > m.scratch.cut {
			return
		}
		m.redeliver.pop()
		switch {
		case !live: // acked, or given another deadline since
		case m.cfg.MaxDeliver > 0 && p.Deliveries >= uint64(m.cfg.MaxDeliver):
			m.scratch.exhausted = append(m.scratch.exhausted, exhausted{d.seq, p.Deliveries})
		default:
			m.addDue(d.seq)
		}
	}
}

// addDue queues seq for redelivery once.
func (m *machine) addDue(seq uint64) {
	if _, ok := m.inDue[seq]; ok {
		return
	}
	m.inDue[seq] = struct{}{}
	m.due = append(m.due, seq)
}

func (m *machine) compactDeadlines() {
	_ = m.ledger.Update(func(s *jetlog.ConsumerState) {
		m.redeliver.compact(func(d deadline) bool {
			p := s.Pending[d.seq]
			return p != nil && p.Deadline == d.at
		})
	}, false)
}

// target returns who takes the next delivery: the oldest waiting pull
// whose requester still listens, or the push subscriber when it listens
// and flow control allows; nil if nobody. Priority groups pick their
// own (machinepriority.go).
func (m *machine) target(now time.Time) *pullRequest {
	if m.push != nil {
		if !m.listening || m.fcPending {
			return nil
		}
		m.push.batch = pushBatch
		return m.push
	}
	if m.prio != nil {
		return m.priorityTarget(now)
	}
	for len(m.waiting) > 0 {
		r := m.waiting[0]
		if m.src.HasInterest(r.reply) {
			return r
		}
		m.dropFirst() // the requester went away
	}
	return nil
}

// deliver hands due redeliveries, then last-per-subject start messages,
// then new messages to the waiting pulls in arrival order, one each in
// turn while several wait (takesTurns), or to the push subscriber. Each
// request's messages are recorded as one journaled step, so a batch
// costs one write.
func (m *machine) deliver(now time.Time) {
	for {
		r := m.target(now)
		if r == nil {
			return
		}
		msgs, froms, full := m.gather(r, now)
		if len(msgs) == 0 {
			switch {
			case full:
				return // max ack pending reached
			case r.hasBudget && m.hasCandidate(now): // the next message is over the budget
				m.dropFirst()
				m.status(r.reply, pendingStatus("409 Message Size Exceeds MaxBytes", r))
				continue
			}
			return
		}
		if !m.send(r, msgs, froms, now) {
			return
		}
		switch {
		case r == m.push:
			m.flowControl(msgs)
			// One batch per step, so that acks and pulls are heard
			// between batches of a long backlog; the timer brings the
			// next step at once.
			m.pushMore = r.batch == 0
			return
		case r.batch == 0 && r.hasBudget && r.maxBytes > 0:
			// The count ran out before the byte budget did; the
			// reference says so, so the client stops waiting for bytes.
			m.dropFirst()
			m.status(r.reply, pendingStatus("409 Batch Completed", r))
		case r.batch == 0 || r.hasBudget && r.maxBytes == 0:
			m.dropFirst()
		}
		if len(m.waiting) > 1 && m.waiting[0] == r && m.takesTurns(r) {
			m.waiting = append(m.waiting[1:], r) // to the back of the line
		}
		if full {
			return
		}
	}
}

// takesTurns reports whether pull r shares the messages with other
// waiting pulls one at a time, as the reference hands them out: each
// waiting pull gets the next message in turn, so competing workers that
// pull at once all get work. A lone pull takes its whole batch in one
// step, and so do pulls that all answer to one inbox (nats.go's Consume
// pulls again before its last pull is done) and have no byte budget:
// turns would change nothing the client sees but cost a step per
// message. With a budget they do change it: which pull a message uses
// up decides which pull a large one later no longer fits (409), and so
// when and how often the client pulls again (nats.go's
// TestPullConsumerConsume/with_max_messages_and_per_fetch_size_limit
// counts its pulls). Priority groups pick their own order.
func (m *machine) takesTurns(r *pullRequest) bool {
	if r == m.push || m.prio != nil || len(m.waiting) < 2 {
		return false
	}
	for _, w := range m.waiting {
		if w.reply != r.reply || w.hasBudget {
			return true
		}
	}
	return false
}

// gather picks up to r's batch of messages within its byte budget, as
// many new ones as max ack pending leaves room for, and one at a time
// when replay is paced. full reports that max ack pending stopped it.
func (m *machine) gather(r *pullRequest, now time.Time) (msgs []jetlog.Msg, froms []int, full bool) {
	msgs, froms = m.scratch.msgs[:0], m.scratch.froms[:0]
	defer func() {
		m.scratch.msgs, m.scratch.froms = msgs, froms
		m.dropAhead()
	}()
	room := -1 // first deliveries max ack pending still allows
	if limit := m.cfg.MaxAckPending; limit > 0 && m.cfg.AckPolicy != AckNone {
		room = max(limit-m.ledger.NumAckPending()+m.groups.numTombs(), 0)
	}
	budget, sizer := r.maxBytes, m.newPullSizer(r)
	limit := r.batch
	if m.takesTurns(r) {
		limit = 1 // several pulls wait: one message each, in turn (see deliver)
	}
	// A push batch with flow control ends where the window fills, so its
	// request goes out there (flowControl) however much is queued.
	fcLeft := -1
	if r == m.push && m.cfg.FlowControl {
		fcLeft = max(flowControlWindow-m.fcBytes, 1)
	}
	for len(msgs) < limit && fcLeft != 0 {
		want := limit - len(msgs)
		if room >= 0 {
			want = max(min(want, room), 1)
		}
		if m.cfg.ReplayPolicy == ReplayOriginal {
			want = 1
		}
		if m.prio != nil && !m.gatherAdmits(r, froms) {
			break
		}
		msg, from, ok := m.candidate(now, want)
		if !ok {
			break
		}
		if from != fromDue && room == 0 {
			m.putBack(msg.Seq, from)
			full = true
			break
		}
		if r == m.push && m.pushChecked && !m.src.MayDeliver(r.reply, msg.Subject) {
			if m.refusePush(msg, from) {
				continue
			}
			break
		}
		size := sizer.next(m, msg, from)
		if r.hasBudget && size > budget || !m.replayDue(msg, len(msgs), now) {
			m.putBack(msg.Seq, from)
			break
		}
		if m.rate != nil && !m.rate.allows(len(msg.Subject)+len(msg.Header)+len(msg.Data), now) {
			m.putBack(msg.Seq, from) // it goes when the bucket holds it (nextDeadline)
			break
		}
		if from != fromDue && room > 0 {
			room--
		}
		budget -= size
		if fcLeft > 0 {
			fcLeft = max(fcLeft-len(msg.Subject)-len(msg.Header)-len(msg.Data), 0)
		}
		msgs = append(msgs, msg)
		froms = append(froms, from)
	}
	return msgs, froms, full
}

// candidate takes the next message to deliver. want is how many this
// gather may still take: new messages are read that many at a time
// (one read for a run of them), and those not taken are dropped when
// the gather ends (dropAhead).
func (m *machine) candidate(now time.Time, want int) (jetlog.Msg, int, bool) {
	for len(m.due) > 0 {
		seq := m.due[0]
		m.due = m.due[1:]
		delete(m.inDue, seq)
		if !m.stillDue(seq, now) {
			continue
		}
		msg, err := m.src.Get(seq)
		if err != nil { // gone from the stream: nothing to redeliver
			_ = m.ledger.Update(func(s *jetlog.ConsumerState) { m.releaseLocked(s, seq, now.UnixNano()) }, false)
			continue
		}
		return msg, fromDue, true
	}
	if m.groups != nil {
		if msg, ok := m.nextReady(); ok {
			return msg, fromReady, true
		}
	}
	for len(m.initial) > 0 {
		seq := m.initial[0]
		m.initial = m.initial[1:]
		if msg, err := m.src.Get(seq); err == nil {
			if m.groups != nil && m.admit(msg, true) != admitted {
				continue
			}
			return msg, fromInitial, true
		}
	}
	for {
		if len(m.scratch.ahead) == 0 {
			batch, err := m.src.NextBatch(m.next, m.cfg.filters(), max(want, 1))
			if len(batch) == 0 {
				_ = err // none, or unreadable: nothing to deliver now
				return jetlog.Msg{}, 0, false
			}
			m.scratch.ahead = batch
		}
		msg := m.scratch.ahead[0]
		m.scratch.ahead = m.scratch.ahead[1:]
		m.next = msg.Seq + 1
		if m.groups != nil {
			switch m.admit(msg, false) {
			case heldBack:
				continue
			case heldFull: // read on once a group frees up
				m.next, m.scratch.ahead = msg.Seq, nil
				return jetlog.Msg{}, 0, false
			}
		}
		return msg, fromNew, true
	}
}

// dropAhead forgets the messages read ahead and not taken: the next
// gather starts from the first of them.
func (m *machine) dropAhead() {
	if len(m.scratch.ahead) > 0 {
		m.next = min(m.next, m.scratch.ahead[0].Seq)
		m.scratch.ahead = nil
	}
}

// stillDue reports whether seq is pending with its deadline passed (it
// may have been acked or given a new deadline since it came due).
func (m *machine) stillDue(seq uint64, now time.Time) bool {
	m.scratch.probeSeq, m.scratch.probeNow = seq, now.UnixNano()
	_ = m.ledger.Update(m.probeStep, false)
	return m.scratch.probeDue
}

// probeLocked is stillDue's ledger step.
func (m *machine) probeLocked(s *jetlog.ConsumerState) {
	p := s.Pending[m.scratch.probeSeq]
	m.scratch.probeDue = p != nil && p.Deadline <= m.scratch.probeNow
}

// putBack undoes candidate for a message that was not sent.
func (m *machine) putBack(seq uint64, from int) {
	switch from {
	case fromDue:
		m.due = append([]uint64{seq}, m.due...)
		m.inDue[seq] = struct{}{}
	case fromReady:
		m.unready(seq)
	case fromInitial:
		if m.groups == nil || !m.unclaim(seq) {
			m.initial = append([]uint64{seq}, m.initial...)
		}
	default:
		if m.groups == nil || !m.unclaim(seq) {
			m.next = min(m.next, seq)
		}
	}
}

// hasCandidate reports whether a message is waiting, without taking it.
func (m *machine) hasCandidate(now time.Time) bool {
	msg, from, ok := m.candidate(now, 1)
	if ok {
		m.putBack(msg.Seq, from)
	}
	m.dropAhead()
	return ok
}

// replayDue paces replay_policy original: a message goes out only once
// as much time has passed since the previous one as passed between their
// stores. n is how many messages this step gathered already.
func (m *machine) replayDue(msg jetlog.Msg, n int, now time.Time) bool {
	if m.cfg.ReplayPolicy != ReplayOriginal {
		return true
	}
	if n > 0 { // one message per step, so each gets its own time
		m.replayAt = now
		return false
	}
	if !m.replayPrevStored.IsZero() {
		at := m.replayPrevSent.Add(msg.Time.Sub(m.replayPrevStored))
		if now.Before(at) {
			m.replayAt = at
			return false
		}
	}
	m.replayPrevStored, m.replayPrevSent, m.replayAt = msg.Time, now, time.Time{}
	return true
}

// send records the deliveries of msgs in one step and queues them for
// r, with the ack reply subject clients parse for metadata. It reports
// false, sending nothing, when the deliveries could not be recorded.
func (m *machine) send(r *pullRequest, msgs []jetlog.Msg, froms []int, now time.Time) bool {
	m.scratch.pend = m.scratch.pend[:0]
	// A delivery lost in a power cut is only delivered again, so it need
	// not wait for an fsync (at-least-once holds either way).
	err := m.ledger.Update(m.recordStep, false)
	pend := m.scratch.pend
	if err != nil {
		for i := len(msgs) - 1; i >= 0; i-- {
			m.putBack(msgs[i].Seq, froms[i])
		}
		m.act.err = err
		return false
	}
	if m.groups != nil {
		m.sentGroups(msgs, froms)
	}
	m.sampler.delivered(msgs, now)
	pin, pinned := "", false
	if m.prio != nil {
		pin, pinned = m.pinFor(r, now)
	}
	replies, ends := m.ackReplies(msgs, froms, pend)
	start := 0
	for i, msg := range msgs {
		reply := replies[start:ends[i]]
		start = ends[i]
		hdr, data := msg.Header, msg.Data
		if m.cfg.HeadersOnly { // headers and the payload's size, not the payload
			hdr = withHeader(hdr, "Nats-Msg-Size", strconv.Itoa(len(data)))
			data = nil
		}
		if r.hasBudget { // as the reference counts it (pullSizer), before the pin
			r.maxBytes = max(r.maxBytes-len(msg.Subject)-len(reply)-len(hdr)-len(data), 0)
		}
		if pinned {
			hdr = withHeader(hdr, hdrPinID, pin)
		}
		m.act.out = append(m.act.out, outMsg{to: r.reply, subject: msg.Subject, reply: reply, hdr: hdr, data: data, deliver: true})
		r.batch--
	}
	r.lastSent = now
	m.lastActive = now // the driver moves it on to when they went out (Delivered)
	return true
}

// ackReplies builds the ack reply subjects of a batch, the metadata
// clients parse, into one string and returns where each ends in it: one
// allocation a batch rather than one a message (see
// TestMachineFetchJournaledAllocs). Each delivery carries what is left
// for this consumer after it, as the reference counts it: the first
// deliveries behind it in this batch (last_per_subject start messages
// and new ones), plus what is left to deliver from next on.
func (m *machine) ackReplies(msgs []jetlog.Msg, froms []int, pend []jetlog.Pending) (string, []int) {
	base, fresh := m.pendingAfterNext(), 0
	for _, f := range froms {
		if f != fromDue {
			fresh++
		}
	}
	b, ends := m.scratch.reply[:0], m.scratch.replyEnds[:0]
	for i, msg := range msgs {
		p := pend[i]
		if froms[i] != fromDue {
			fresh--
		}
		b = append(b, m.ackBase...)
		b = append(strconv.AppendUint(b, p.Deliveries, 10), '.')
		b = append(strconv.AppendUint(b, msg.Seq, 10), '.')
		b = append(strconv.AppendUint(b, p.Consumer, 10), '.')
		b = append(strconv.AppendInt(b, msg.Time.UnixNano(), 10), '.')
		b = strconv.AppendUint(b, base+uint64(fresh), 10)
		ends = append(ends, len(b))
	}
	m.scratch.reply, m.scratch.replyEnds = b, ends
	return string(b), ends
}

// pendingAfterNext counts what is left to deliver from next on: the
// last_per_subject start messages, the held-back messages of busy
// groups (below next), and the stored messages the filters
// match (for an unfiltered consumer, from the seqs alone, without a
// count over the log).
func (m *machine) pendingAfterNext() uint64 {
	n := uint64(len(m.initial) + m.groups.numHeld())
	if f := m.cfg.filters(); len(f) > 0 {
		return n + m.src.NumPending(m.next, f)
	}
	last := m.src.LastSeq()
	return n + last - min(last, m.next-1)
}

// recordLocked is send's ledger step: it records the deliveries of
// scratch.msgs and their redelivery deadlines.
func (m *machine) recordLocked(s *jetlog.ConsumerState) {
	for _, msg := range m.scratch.msgs {
		var p jetlog.Pending
		switch {
		case m.cfg.AckPolicy == AckNone:
			p = s.DeliverAcked(msg.Seq)
		case m.cfg.BackOffJitter > 0:
			p = s.Deliver(msg.Seq)
			s.Nak(msg.Seq, m.jitter(m.redeliveryWait(p.Deliveries)))
		default:
			p = s.Deliver(msg.Seq)
		}
		if q := s.Pending[msg.Seq]; q != nil {
			m.awaitAck(msg.Seq, q.Deadline)
		}
		m.scratch.pend = append(m.scratch.pend, p)
	}
	if m.groups != nil {
		m.recordGroupsLocked(s)
	}
}

// redeliveryWait is the back-off for the given delivery count, or the
// ack wait.
func (m *machine) redeliveryWait(deliveries uint64) time.Duration {
	if b := m.cfg.BackOff; len(b) > 0 {
		return time.Duration(b[min(int(max(deliveries, 1))-1, len(b)-1)])
	}
	return ledgerAckWait(m.cfg)
}

// jitter spreads d by up to the configured fraction either way.
func (m *machine) jitter(d time.Duration) time.Duration {
	frac := m.cfg.BackOffJitter
	if frac <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + frac*(2*m.random()-1)))
}
