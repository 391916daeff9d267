package jetstream

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// maxAckBatch bounds how many acks are journaled in one step.
const maxAckBatch = 1024

// consumer drives a machine: it owns the consumer's subscriptions and the
// one goroutine (run) that feeds the machine its inputs, carries out the
// actions, and arms one timer for the earliest deadline. An idle consumer
// is a goroutine asleep in select with no timer armed: it costs nothing.
//
// Inputs arrive from client reader goroutines (pulls, acks, flow-control
// answers, interest changes) and from the stream (new messages) through
// channels; only run touches the machine.
type consumer struct {
	sh      *shared
	stream  string
	name    string
	created time.Time
	cfg     consumerConfig
	src     *consumerSource
	ledger  ledger
	durable bool // state journaled in the stream's directory
	// onAcked applies the stream's retention after acks.
	onAcked func(seqs []uint64)
	// onExpired removes the consumer after its inactivity threshold.
	onExpired func(*consumer)
	// answered, when not nil, is closed once the API has answered the
	// request that created the consumer; run takes no step before
	// (createConsumerAnswered).
	answered <-chan struct{}
	// groups is the machine's held-back messages (x_bus_group_by), read
	// by doneWith; nil without groups.
	groups *groups

	pulls   chan pullMsg
	acks    chan ackMsg
	kick    chan struct{}          // capacity 1: new messages or interest changed
	fcDone  chan flowControlAnswer // answers to flow-control requests
	pause   chan time.Time         // a pause (or, zero, a resume) from the API
	resets  chan resetRequest      // a reset from the API (reset.go)
	unpin   chan string            // a group to unpin, from the API; nil without priority groups
	stop    chan struct{}
	done    chan struct{}
	subs    []Subscription
	unwatch func()
	// lostDead counts dead letters nothing stored (no stream captures the
	// subject, or its stream refused them).
	lostDead atomic.Int64
	// waitingAt is the stream seq of the refused push delivery the
	// consumer waits at (machinerefused.go), logged once; owned by the
	// consumer's goroutine.
	waitingAt uint64
	// lastDelivered and lastAcked are when (unix ns, the service's
	// clock) the last message went out and the last acks came in, for
	// monitoring; 0 is never.
	lastDelivered, lastAcked atomic.Int64
	// pausedUntil is the config's pause_until as last set (unix ns; 0 for
	// none), for info: cfg keeps the one the consumer started with.
	pausedUntil atomic.Int64
	// lagging is whether the lag alert is firing (lagalert.go).
	lagging atomic.Bool
	// suspended says why the owner's rights no longer cover the
	// consumer, which then delivers nothing (rightscheck.go).
	suspended atomic.Pointer[apiError]

	mu       sync.Mutex // guards the fields below: what info reads
	waiting  int
	next     uint64
	initial  int // below next, still to deliver: last_per_subject start messages and held-back group messages
	dead     int64
	closed   bool
	closeMsg string // the status waiting pulls get when run ends
	pinID    string // the pinned client of a pinned_client consumer, and since when
	pinnedAt time.Time
}

// pullMsg is a MSG.NEXT request copied off a reader goroutine.
type pullMsg struct {
	reply string
	body  []byte
}

// consumerStart is what a consumer starts from.
type consumerStart struct {
	cfg       consumerConfig
	created   time.Time
	src       *consumerReader
	ledger    ledger
	durable   bool
	onAcked   func([]uint64)
	onExpired func(*consumer)
	answered  <-chan struct{} // nil, or what run waits for before its first step
}

// consumerSub is one of a consumer's subscriptions: pulls and acks (an
// ack's +NXT pulls) need the sender's Rights (refusePull).
type consumerSub struct {
	subject string
	h       RequestHandler
}

// startConsumer subscribes the consumer's subjects and starts its goroutine.
func startConsumer(sh *shared, stream string, cs consumerStart) (*consumer, error) {
	c := &consumer{
		sh:        sh,
		stream:    stream,
		name:      cs.cfg.Name,
		created:   cs.created,
		cfg:       cs.cfg,
		src:       newConsumerSource(cs.src, cs.cfg),
		ledger:    cs.ledger,
		durable:   cs.durable,
		onAcked:   cs.onAcked,
		onExpired: cs.onExpired,
		answered:  cs.answered,
		pulls:     make(chan pullMsg, 256),
		acks:      make(chan ackMsg, 4096),
		kick:      make(chan struct{}, 1),
		fcDone:    make(chan flowControlAnswer, 8),
		pause:     make(chan time.Time),
		resets:    make(chan resetRequest),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if len(cs.cfg.PriorityGroups) > 0 {
		c.unpin = make(chan string)
	}
	info := cs.ledger.Info()
	start, initial := startPosition(cs.cfg, cs.src.log, info)
	if start > 1 && len(initial) == 0 && info.Delivered.Stream == 0 && info.NumAckPending == 0 {
		// Nothing delivered yet: record where the deliver policy starts
		// it, so that a restart resumes there (a deliver-new consumer
		// would otherwise start after what was stored meanwhile) and
		// info says delivered and ack floor start-1, as the reference.
		if err := cs.ledger.Update(func(s *jetlog.ConsumerState) { s.Reset(start) }, true); err != nil {
			c.src.close()
			return nil, err
		}
	}
	subjects := newAckSubjects(sh.domain, sh.account, stream, c.name, sh.ackV2)
	m := newMachine(machineConfig{
		stream: stream, cfg: cs.cfg, src: c.src, ledger: cs.ledger, random: sh.random,
		now: sh.now(), start: start, initial: initial, maxMsgSize: int(cs.src.log.Config().MaxMsgSize),
		subjects: subjects,
	})
	c.next, c.initial, c.groups = start, len(initial)+m.groups.numHeld(), m.groups
	if p := cs.cfg.PauseUntil; p != nil {
		c.pausedUntil.Store(p.UnixNano())
	}
	subs := []consumerSub{
		{apiPrefix + "CONSUMER.MSG.NEXT." + stream + "." + c.name, c.capturePull},
	}
	if cs.cfg.AckPolicy != AckFlowControl { // acked by flow control alone
		for _, s := range subjects.ackSubs {
			subs = append(subs, consumerSub{s, c.captureAck})
		}
	}
	if cs.cfg.DeliverSubject != "" {
		for _, s := range subjects.fcSubs {
			subs = append(subs, consumerSub{s, c.captureFlowControl})
		}
	}
	for _, s := range subs {
		sub, err := sh.core.SubscribeRequests(s.subject, s.h)
		if err != nil {
			c.unsubscribe()
			c.src.close()
			return nil, err
		}
		c.subs = append(c.subs, sub)
	}
	if cs.cfg.DeliverSubject != "" {
		c.unwatch = sh.core.WatchInterest(cs.cfg.DeliverSubject, c.signal)
	}
	go c.run(m)
	return c, nil
}

// startPosition is where first deliveries begin: after what was
// delivered before a restart, or per the deliver policy for a new
// consumer; and for last_per_subject, the seqs to deliver first.
func startPosition(cfg consumerConfig, l *jetlog.Log, info jetlog.ConsumerInfo) (uint64, []uint64) {
	if d := info.Delivered.Stream; d > 0 {
		return d + 1, nil
	}
	s := l.State()
	switch cfg.DeliverPolicy {
	case DeliverNew:
		return s.LastSeq + 1, nil
	case DeliverLast:
		var last uint64
		for _, f := range cfg.filterList() {
			last = max(last, l.LastSeqBySubject(f))
		}
		if last == 0 {
			return s.LastSeq + 1, nil
		}
		return last, nil
	case DeliverByStartSequence:
		return max(cfg.OptStartSeq, 1), nil
	case DeliverByStartTime:
		return l.SeqAtTime(*cfg.OptStartTime), nil
	case DeliverLastPerSubject:
		var initial []uint64
		for _, f := range cfg.filterList() {
			for subj := range l.SubjectCounts(f) {
				if seq := l.LastSeqBySubject(subj); seq != 0 {
					initial = append(initial, seq)
				}
			}
		}
		slices.Sort(initial)
		return s.LastSeq + 1, initial
	}
	return max(s.FirstSeq, 1), nil
}

// signal wakes the goroutine to look at the stream and at the interest
// on the deliver subject again. It never blocks.
func (c *consumer) signal() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// capturePull queues a MSG.NEXT request (client reader goroutine), or
// refuses it at once when its sender may not read what it would get.
func (c *consumer) capturePull(from Rights, _, reply []byte, hdr int, msg []byte) bool {
	if len(reply) == 0 {
		return true
	}
	if status := c.refusePull(from); status != "" {
		c.sh.core.Publish(string(reply), "", statusHeader(status), nil)
		return true
	}
	body := msg
	if hdr >= 0 {
		body = msg[hdr:]
	}
	p := pullMsg{reply: string(reply), body: append([]byte(nil), body...)}
	select {
	case c.pulls <- p:
	case <-c.stop:
	}
	return true
}

// captureAck queues an ack (client reader goroutine). The pull of a
// +NXT is checked as MSG.NEXT's is; refused, it is a plain ack.
func (c *consumer) captureAck(from Rights, subject, reply []byte, hdr int, msg []byte) bool {
	seq, ok := parseAckSubject(subject)
	if !ok {
		return true
	}
	body := msg
	if hdr >= 0 {
		body = msg[hdr:]
	}
	a := parseAck(seq, body, string(reply))
	if a.kind == ackNext && a.reply != "" {
		if status := c.refusePull(from); status != "" {
			c.sh.core.Publish(a.reply, "", statusHeader(status), nil)
			a.kind, a.arg, a.reply = ackAck, "", ""
		}
	}
	select {
	case c.acks <- a:
	case <-c.stop:
	}
	return true
}

// captureFlowControl queues the push subscriber's answer to a
// flow-control request (client reader goroutine).
func (c *consumer) captureFlowControl(_ Rights, subject, _ []byte, hdr int, msg []byte) bool {
	var h []byte
	if hdr > 0 {
		h = msg[:hdr]
	}
	// Never blocks: an answer that finds the queue full is dropped, and
	// the next idle heartbeat names the request again (Nats-Consumer-
	// Stalled), so it is answered again.
	select {
	case c.fcDone <- parseFlowControlAnswer(subject, h):
	default:
	}
	return true
}

// run is the consumer's goroutine: the only one that touches m.
func (c *consumer) run(m *machine) {
	defer close(c.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	acks := make([]ackMsg, 0, maxAckBatch)
	if c.answered != nil {
		select {
		case <-c.answered:
		case <-c.stop:
			c.closeMachine(m)
			return
		}
	}
	a := m.Stored(c.sh.now()) // a full stream, or deadlines from before a restart
	var reset resetResult
	var resetDone chan resetResult // a reset to answer once its step is carried out
	for {
		expired := c.carryOut(m, a, timer)
		if resetDone != nil { // after carryOut, so the answer's info sees the reset
			resetDone <- reset
			resetDone = nil
		}
		if expired {
			return
		}
		select {
		case p := <-c.pulls:
			a = m.Pull(p.reply, p.body, c.sh.now())
		case ack := <-c.acks:
			acks = append(acks[:0], ack)
			for drained := false; !drained && len(acks) < maxAckBatch; {
				select {
				case ack := <-c.acks:
					acks = append(acks, ack)
				default:
					drained = true
				}
			}
			now := c.sh.now()
			a = m.Acks(acks, now)
			c.lastAcked.Store(now.UnixNano())
		case fc := <-c.fcDone:
			a = m.FlowControlReply(fc, c.sh.now())
		case <-c.kick:
			a = m.Stored(c.sh.now())
		case <-timer.C:
			a = m.Tick(c.sh.now())
		case until := <-c.pause:
			a = m.Pause(until, c.sh.now())
		case r := <-c.resets:
			reset.seq, a, reset.err = m.Reset(r.seq, r.timeSeq, c.sh.now())
			resetDone = r.done
		case group := <-c.unpin:
			a = m.Unpin(group, c.sh.now())
		case <-c.stop:
			c.closeMachine(m)
			return
		}
	}
}

// closeMachine ends m with the status the consumer was closed with, and
// sends what that says (waiting pulls' answers).
func (c *consumer) closeMachine(m *machine) {
	c.mu.Lock()
	status := c.closeMsg
	c.mu.Unlock()
	c.send(m.Close(status))
}

// carryOut does what a step asked: sends, retention, dead-letter counts,
// the counters info reads, and the timer. It reports true when the
// consumer expired and has been removed.
func (c *consumer) carryOut(m *machine, a actions, timer *time.Timer) bool {
	deadline := a.deadline
	// The counters info reads first: the ledger already shows the
	// step's deliveries, and a client that gets one and asks for info at
	// once must see num_pending without it too.
	c.mu.Lock()
	c.waiting, c.next, c.dead, c.initial = m.numWaiting(), m.next, m.deadLettered, len(m.initial)+m.groups.numHeld()
	if m.prio != nil {
		c.pinID, c.pinnedAt = m.pinState()
	}
	c.mu.Unlock()
	if c.send(a) {
		// After a slow read the step's time is long past: the
		// inactivity threshold counts from now (machine.Delivered).
		deadline = m.Delivered(c.sh.now())
	}
	if a.err != nil {
		c.sh.log.Error("consumer state", "stream", c.stream, "consumer", c.name, "err", a.err)
	}
	c.logRefused(a)
	if len(a.acked) > 0 && c.onAcked != nil {
		c.onAcked(a.acked)
	}
	if a.dead > 0 {
		c.sh.deadLettered.Add(int64(a.dead))
	}
	if a.expired {
		c.expire(m)
		return true
	}
	timer.Stop()
	if !deadline.IsZero() {
		timer.Reset(max(deadline.Sub(c.sh.now()), 0))
	}
	return false
}

// send carries out a step's messages and reports whether any was a
// delivery of a stored message.
func (c *consumer) send(a actions) bool {
	delivered := false
	for _, o := range a.out {
		switch {
		case o.deliver:
			delivered = true
			c.sh.core.Deliver(o.to, o.subject, o.reply, o.hdr, o.data)
		case o.deadLetter:
			if c.sh.core.Publish(o.to, o.reply, o.hdr, o.data) == 0 {
				c.deadLetterLost("nothing captures the dead-letter subject " + o.to)
			}
		default:
			c.sh.core.Publish(o.to, o.reply, o.hdr, o.data)
		}
	}
	if delivered {
		c.lastDelivered.Store(c.sh.now().UnixNano())
	}
	return delivered
}

// deadLetterLost counts and logs a dead letter that was not stored.
func (c *consumer) deadLetterLost(why string) {
	c.lostDead.Add(1)
	c.sh.deadLettersLost.Add(1)
	c.sh.log.Warn("dead letter lost", "stream", c.stream, "consumer", c.name, "reason", why)
}

// expire removes a consumer that was inactive for its threshold, from
// its own goroutine, unless someone is already closing it (who then waits
// for this goroutine to end).
func (c *consumer) expire(m *machine) {
	if !c.claimClose("409 Consumer Deleted") {
		return
	}
	c.send(m.Close("409 Consumer Deleted"))
	c.release()
	c.onExpired(c)
}

// claimClose marks the consumer closed, remembering the status waiting
// pulls get; only the first caller gets true.
func (c *consumer) claimClose(status string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed, c.closeMsg = true, status
	return true
}

// close stops the goroutine, telling waiting pulls status, drops the
// subscriptions and closes the state. It reports false if the consumer
// was closed already (by expiry), once that close has finished.
func (c *consumer) close(status string) bool {
	if !c.claimClose(status) {
		<-c.done
		return false
	}
	close(c.stop)
	<-c.done
	c.release()
	return true
}

// release drops the subscriptions and closes the state; called once, by
// whoever claimed the close.
func (c *consumer) release() {
	c.unsubscribe()
	c.src.close()
	if err := c.ledger.Close(); err != nil {
		c.sh.log.Error("close consumer state", "stream", c.stream, "consumer", c.name, "err", err)
	}
}

func (c *consumer) unsubscribe() {
	if c.unwatch != nil {
		c.unwatch()
		c.unwatch = nil
	}
	for _, s := range c.subs {
		c.sh.core.Unsubscribe(s)
	}
	c.subs = nil
}

// doneWith reports whether the consumer has acked seq or will never see
// it (interest retention asks every consumer).
func (c *consumer) doneWith(seq uint64) bool {
	c.mu.Lock()
	next := c.next
	c.mu.Unlock()
	// Held back after next moved past it (read after next: a seq is held
	// back before next is published, and pending before it is no longer
	// held back).
	if c.groups.holds(seq) {
		return false
	}
	// A message given up on (max_deliver) is not done with until acked,
	// as the reference keeps it.
	pending := false
	_ = c.ledger.Update(func(s *jetlog.ConsumerState) {
		_, pending = s.Pending[seq]
		if !pending {
			_, pending = s.GivenUp[seq]
		}
	}, false)
	return !pending && seq < next
}
