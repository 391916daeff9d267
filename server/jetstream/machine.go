package jetstream

import (
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// source is what a consumer reads: its stream's messages and, from the
// core, who is listening. Reads only; a fake in the tests.
type source interface {
	Get(seq uint64) (jetlog.Msg, error)
	// NextBatch returns up to max stored messages at or after seq that
	// match any of filters (none: every message), in seq order, read at
	// once.
	NextBatch(seq uint64, filters []string, max int) ([]jetlog.Msg, error)
	LastSeq() uint64
	// NumPending counts the stored messages at or after seq that match
	// any of filters.
	NumPending(seq uint64, filters []string) uint64
	HasInterest(subject string) bool
	// MayDeliver reports whether a delivery of a stored message on
	// subject to inbox would reach anyone (Core.MayDeliver).
	MayDeliver(inbox, subject string) bool
	// FiltersStored reports whether MayDeliver(inbox, …) may be false
	// while someone listens (Core.FiltersStored).
	FiltersStored(inbox string) bool
}

// outMsg is a message a step asks to send. For a delivery of a stored
// message (deliver is true), to is the inbox and subject the message's
// own; otherwise subject is unused and the message is published to to.
type outMsg struct {
	to, subject, reply string
	hdr, data          []byte
	deliver            bool
	deadLetter         bool // a dead letter: count it lost if nobody takes it
}

// actions is what a step of the machine asks its driver to do, in order:
// send out, apply retention for acked, then arm the timer for deadline
// (zero: no timer). expired says the consumer went inactive and must be
// deleted.
type actions struct {
	out      []outMsg
	acked    []uint64
	dead     int // dead letters given up on in this step
	deadline time.Time
	expired  bool
	err      error // a state change that could not be recorded, to log
	// refused is the stream seq of a push delivery no subscriber may
	// receive (machinerefused.go), to log; refusedDead says it went to
	// the dead-letter subject rather than holding the consumer.
	refused     uint64
	refusedDead bool
}

// machine is a consumer's behaviour as a pure state machine, in the
// style of etcd-raft's Step/Ready: the driver feeds it inputs with the
// current time (Pull, Acks, Stored, Interest, FlowControlReply, Tick) and
// carries out the actions each returns. It starts no goroutine, reads no
// clock and opens no socket, so every behaviour (pull batches and
// expiries, heartbeats, NAK delays and back-off, max deliver to the dead
// letter subject, flow control) can be driven by a test with a fake
// clock. Not safe for concurrent use: one goroutine owns it.
//
// Delivery state goes through the ledger (journaled or in memory); the
// machine keeps only what is about the flow of deliveries: where new
// messages start, the waiting pulls, the redelivery deadlines.
type machine struct {
	stream, name string
	cfg          consumerConfig
	ackBase      string // "$JS.ACK.<stream>.<consumer>." or its v2 form (ackformat.go)
	fcBase       string // "$JS.FC.<stream>.<consumer>." or its v2 form
	src          source
	ledger       ledger
	random       func() float64 // in [0, 1), for back-off jitter

	next    uint64   // lowest stream seq not yet delivered for the first time
	initial []uint64 // last_per_subject seqs still to deliver first
	// pausedUntil holds every delivery and redelivery back until then;
	// pulls wait, expire and get heartbeats as usual.
	pausedUntil time.Time

	waiting []*pullRequest
	push    *pullRequest // the standing request of a push consumer
	// listening is whether the push consumer's deliver subject has a
	// subscriber, as of the last step.
	listening bool
	// pushChecked is whether, as of the last step, a push subscriber
	// has rights a stored subject is checked against: each delivery is
	// then asked about first (machinerefused.go).
	pushChecked bool
	fcPending   bool // a flow-control request awaits its answer
	fcBytes     int  // bytes pushed since the last answer
	fcCount     uint64
	fcReply     string // the pending request's reply subject, for Nats-Consumer-Stalled
	pushMore    bool   // a push batch went out whole: the next may follow at once

	redeliver deadlineHeap // future redelivery deadlines of pending seqs
	due       []uint64     // pending seqs past their deadline, in order
	inDue     map[uint64]struct{}

	lastActive time.Time
	// latestAckDeadline is the latest redelivery deadline given to a
	// pending seq (unix ns; awaitAck); it only grows.
	latestAckDeadline int64
	// replay_policy original: store and send time of the last message,
	// and when the next one may go.
	replayPrevStored, replayPrevSent, replayAt time.Time

	// groups holds back messages of busy groups (x_bus_group_by); nil
	// without, which is all the hot paths look at.
	groups *groups
	// prio is the priority groups state (machinepriority.go); nil
	// without, which is all the hot paths look at.
	prio *priority
	// sampler reports ack latencies (sample_freq; machinesample.go);
	// nil without, which is all the hot paths look at.
	sampler *ackSampler
	// rate paces a push consumer (rate_limit_bps; machinerate.go); nil
	// without.
	rate *pushRate

	deadLettered int64
	act          actions // being built by the current step
	spent        actions // handed over by the step before: its slices are reused after the next one

	// Ledger steps bound once, so that the hot paths do not allocate a
	// closure per call; their inputs and results pass through scratch.
	collectStep, recordStep, probeStep, ackStep func(*jetlog.ConsumerState)
	scratch                                     scratch
}

// scratch is the reused state of the bound ledger steps and of gather.
type scratch struct {
	cut        int64 // collect: unix ns of now
	exhausted  []exhausted
	msgs       []jetlog.Msg // gather and record
	froms      []int
	pend       []jetlog.Pending
	probeSeq   uint64 // probe: is probeSeq still due at probeNow?
	probeNow   int64
	probeDue   bool
	ahead      []jetlog.Msg // new messages read ahead for the gather under way
	acks       []ackMsg
	ackNow     int64 // unix ns of the acks' step
	terminated []termed
	reply      []byte // the ack reply subjects of a batch being built
	replyEnds  []int  // where each ends in reply
}

// exhausted is a due seq that has had max_deliver deliveries.
type exhausted struct{ seq, deliveries uint64 }

// termed is a seq a client terminated, for its advisory and dead letter.
type termed struct {
	seq, deliveries, consumerSeq uint64
	reason                       string
}

// machineConfig is what a machine starts from.
type machineConfig struct {
	stream string
	cfg    consumerConfig // normalized
	src    source
	ledger ledger
	random func() float64
	newID  func() string // pin ids (machinepriority.go); nil: nuid
	now    time.Time
	// start is where first deliveries begin and initial the
	// last_per_subject seqs (see startPosition).
	start   uint64
	initial []uint64
	// maxMsgSize is the stream's max_msg_size (0: none): a push rate
	// limit's burst.
	maxMsgSize int
	// subjects are the ack and flow-control subjects (ackformat.go).
	subjects ackSubjects
}

func newMachine(mc machineConfig) *machine {
	if mc.subjects.ackBase == "" {
		mc.subjects = newAckSubjects("", "", mc.stream, mc.cfg.Name, false)
	}
	m := &machine{
		stream:     mc.stream,
		name:       mc.cfg.Name,
		cfg:        mc.cfg,
		ackBase:    mc.subjects.ackBase,
		fcBase:     mc.subjects.fcBase,
		src:        mc.src,
		ledger:     mc.ledger,
		random:     mc.random,
		next:       mc.start,
		initial:    mc.initial,
		lastActive: mc.now,
		inDue:      map[uint64]struct{}{},
	}
	m.collectStep, m.recordStep, m.probeStep, m.ackStep = m.collectLocked, m.recordLocked, m.probeLocked, m.acksLocked
	m.sampler = newAckSampler(mc.cfg.SampleFreq)
	m.rate = newPushRate(mc.cfg, mc.maxMsgSize)
	if p := mc.cfg.PauseUntil; p != nil {
		m.pausedUntil = *p
	}
	if mc.cfg.DeliverSubject != "" {
		m.push = &pullRequest{reply: mc.cfg.DeliverSubject, heartbeat: time.Duration(mc.cfg.Heartbeat), lastSent: mc.now}
	}
	// A restarted durable consumer: its pending seqs come due again.
	_ = m.ledger.Update(func(s *jetlog.ConsumerState) {
		for _, p := range s.Pending {
			if mc.cfg.GroupBy == nil || !isTombstone(p) {
				m.awaitAck(p.Stream, p.Deadline)
			}
		}
	}, false)
	if g := mc.cfg.GroupBy; g != nil {
		m.groups = newGroups(*g)
		m.rebuildGroups()
	}
	if len(mc.cfg.PriorityGroups) > 0 {
		m.prio = newPriority(mc.cfg, mc.newID)
	}
	return m
}

// Pull takes a MSG.NEXT request answering to reply.
func (m *machine) Pull(reply string, body []byte, now time.Time) actions {
	m.queuePull(reply, body, now)
	return m.step(now)
}

// Acks applies a batch of acks (see ackMsg).
func (m *machine) Acks(acks []ackMsg, now time.Time) actions {
	m.lastActive = now
	m.applyAcks(acks, now)
	return m.step(now)
}

// Stored says the stream has new messages.
func (m *machine) Stored(now time.Time) actions { return m.step(now) }

// Interest says the push consumer's deliver subject may have gained or
// lost its subscriber.
func (m *machine) Interest(now time.Time) actions { return m.step(now) }

// FlowControlReply is the push subscriber's answer to a flow-control
// request: delivery resumes. An answer to an earlier request is stale,
// as the reference ignores it. With ack policy flow_control the answer
// acks what it says the sourcer stored (ackflowcontrol.go).
func (m *machine) FlowControlReply(a flowControlAnswer, now time.Time) actions {
	if !m.fcPending || a.subject != m.fcReply {
		return m.step(now)
	}
	m.fcPending, m.fcBytes = false, 0
	if m.cfg.AckPolicy == AckFlowControl && a.lastStream > 0 {
		// Never past what was delivered: a work queue would drop the rest.
		seq := min(a.lastStream, m.ledger.Info().Delivered.Stream)
		m.lastActive = now
		m.applyAcks([]ackMsg{{seq: seq, kind: ackAck}}, now)
	}
	return m.step(now)
}

// Tick is the timer armed for the last deadline firing.
func (m *machine) Tick(now time.Time) actions { return m.step(now) }

// Delivered says the last step's deliveries went out at now, and
// returns the deadline to arm instead of that step's. A step's own time
// is when its input arrived; a step that read a cold section of the
// stream can take seconds, and the inactivity threshold counts from the
// deliveries (as the reference counts it from each one), not from the
// pull that asked for them: counted from the pull, a threshold shorter
// than the read deletes the consumer before its client can pull again,
// and the next pull gets no responders. Not a step: nothing is due
// that was not due before, so it changes only the deadline.
func (m *machine) Delivered(now time.Time) time.Time {
	if now.After(m.lastActive) {
		m.lastActive = now
	}
	return m.nextDeadline(now)
}

// Pause holds deliveries back until until (the zero time resumes).
func (m *machine) Pause(until, now time.Time) actions {
	m.pausedUntil = until
	return m.step(now)
}

// Close ends every waiting pull with status (nats.go ends a pull on
// "consumer deleted" and on "server shutdown").
func (m *machine) Close(status string) actions {
	m.act = actions{}
	for _, r := range m.waiting {
		m.status(r.reply, statusHeader(status))
	}
	m.waiting = nil
	return m.take()
}

// step does everything that is due at now, after an input: it times out
// and heartbeats pulls, moves redeliveries that came due, delivers what
// it can, and finds the next deadline.
func (m *machine) step(now time.Time) actions {
	if m.push != nil {
		m.listening = m.src.HasInterest(m.push.reply)
		m.pushChecked = m.listening && m.src.FiltersStored(m.push.reply)
		if m.listening {
			m.lastActive = now
		}
	}
	m.pushMore = false
	m.expirePulls(now)
	m.heartbeat(now)
	if m.prio != nil {
		m.expirePin(now)
	}
	if !now.Before(m.pausedUntil) {
		m.collectDue(now)
		m.deliver(now)
	}
	m.finishNoWait(now)
	if m.inactiveSince(now) {
		m.act.expired = true
	}
	m.act.deadline = m.nextDeadline(now)
	return m.take()
}

// take hands over the actions built so far. Their slices are built
// again two steps later: the driver has carried a step's actions out
// before it calls the machine again, so a pull's hundreds of messages
// cost no new slices (see TestMachineFetchJournaledAllocs).
func (m *machine) take() actions {
	a := m.act
	clear(m.spent.out) // what they point to may go
	m.act = actions{out: m.spent.out[:0], acked: m.spent.acked[:0]}
	m.spent = a
	return a
}

func (m *machine) status(to string, hdr []byte) {
	m.act.out = append(m.act.out, outMsg{to: to, hdr: hdr})
}

// inactiveSince reports whether the consumer has an inactivity threshold
// and has had no pulls, deliveries, acks or listener for that long. Pulls
// whose requester went away do not keep it (as the reference drops them
// when its inactivity check runs); one still heard does, until now.
func (m *machine) inactiveSince(now time.Time) bool {
	at := m.inactiveAt()
	if at.IsZero() || now.Before(at) {
		return false
	}
	if len(m.waiting) > 0 {
		m.dropUnheard()
		if len(m.waiting) > 0 {
			m.lastActive = now // checked again a threshold from now
			return false
		}
	}
	return true
}

// inactiveAt is when the consumer goes inactive unless something happens
// first, or when inactiveSince checks that its waiting pulls are still
// heard; zero without a threshold or while the push subscriber listens.
// As the reference counts it, the threshold runs from when the last pull
// ended (expirePulls, finishNoWait) or was last delivered to (send,
// Delivered), and a pull consumer with acks pending also waits for the
// latest ack deadline: a client that works on a batch for longer than
// the threshold can still ack it.
func (m *machine) inactiveAt() time.Time {
	t := time.Duration(m.cfg.InactiveThreshold)
	if t <= 0 || m.listening {
		return time.Time{}
	}
	since := m.lastActive
	if m.push == nil && m.latestAckDeadline > since.UnixNano() && m.ledger.NumAckPending() > 0 {
		since = time.Unix(0, m.latestAckDeadline)
	}
	return since.Add(t)
}

// awaitAck arms seq's redelivery at at (unix ns), which inactiveAt also
// waits for.
func (m *machine) awaitAck(seq uint64, at int64) {
	m.redeliver.add(seq, at)
	m.latestAckDeadline = max(m.latestAckDeadline, at)
}

// nextDeadline is the earliest time something becomes due: a
// redelivery, a pull's expiry or heartbeat, the push heartbeat, the
// inactivity threshold, or a paced replay.
func (m *machine) nextDeadline(now time.Time) time.Time {
	var next time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if now.Before(m.pausedUntil) {
		earliest(m.pausedUntil) // nothing else is delivered before it
	} else if d, ok := m.redeliver.peek(); ok {
		earliest(time.Unix(0, d.at))
	}
	for _, r := range m.waiting {
		earliest(r.expires)
		if r.heartbeat > 0 {
			earliest(r.lastSent.Add(r.heartbeat))
		}
	}
	if p := m.push; p != nil && m.listening && p.heartbeat > 0 {
		earliest(p.lastSent.Add(p.heartbeat))
	}
	earliest(m.inactiveAt())
	if !m.replayAt.IsZero() && m.hasTarget() && !now.Before(m.pausedUntil) {
		earliest(m.replayAt)
	}
	if m.pushMore && m.hasTarget() {
		earliest(now)
	}
	if m.prio != nil {
		earliest(m.pinDeadline())
	}
	if m.rate != nil && m.hasTarget() {
		earliest(m.rate.at)
	}
	if !next.IsZero() && next.Before(now) {
		next = now
	}
	return next
}

// hasTarget reports whether someone could take a delivery now.
func (m *machine) hasTarget() bool {
	if m.push != nil {
		return m.listening && !m.fcPending
	}
	return len(m.waiting) > 0
}

// numWaiting, nextSeq and deadCount are read by the driver for info.
func (m *machine) numWaiting() int { return len(m.waiting) }
