package server

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// consumerTick is how often a consumer with work outstanding looks for
// due redeliveries, expired pulls and heartbeats.
const consumerTick = 20 * time.Millisecond

// maxAckBatch bounds how many acks are journaled in one step.
const maxAckBatch = 1024

// consumer is a pull consumer of a stream. Pull requests and acks arrive
// on its two internal subscriptions; one goroutine (run) owns delivery,
// so state changes and their journal writes happen in one place.
type consumer struct {
	st      *stream
	name    string
	created time.Time
	cfg     consumerConfig
	state   deliveryState
	ackBase string // "$JS.ACK.<stream>.<consumer>."

	mu           sync.Mutex // guards the fields below
	waiting      []*pullRequest
	next         uint64            // lowest stream seq not yet delivered
	initial      []uint64          // last_per_subject seqs still to deliver
	deliveries   map[uint64]uint64 // delivery counts of pending seqs
	lastActive   time.Time
	deadLettered int64
	closed       bool

	// replay_policy original: store time and send time of the last message.
	replayPrevStored, replayPrevSent time.Time

	// Push consumers deliver to cfg.DeliverSubject through push, an
	// endless request, while someone listens and flow control allows.
	push      *pullRequest
	fcPending bool // a flow-control request awaits its answer (guarded by mu)
	fcBytes   int  // bytes delivered since the last answer (guarded by mu)
	fcSub     *subscription

	acks    chan ackMsg
	kick    chan struct{} // capacity 1
	stop    chan struct{}
	done    chan struct{}
	nextSub *subscription
	ackSub  *subscription
}

// pullRequest is one waiting MSG.NEXT request.
type pullRequest struct {
	reply     string
	batch     int
	maxBytes  int // byte budget left, when hasBudget
	hasBudget bool
	noWait    bool
	expires   time.Time // zero: never
	heartbeat time.Duration
	lastSent  time.Time
}

// ackMsg is an ack copied off a client's reader goroutine.
type ackMsg struct {
	seq   uint64
	body  string
	reply string
}

// startConsumer starts the consumer's goroutine and subscriptions.
func (st *stream) startConsumer(cfg consumerConfig, state deliveryState, created time.Time) (*consumer, error) {
	c := &consumer{
		st:         st,
		name:       cfg.Name,
		created:    created,
		cfg:        cfg,
		state:      state,
		ackBase:    "$JS.ACK." + st.name + "." + cfg.Name + ".",
		deliveries: map[uint64]uint64{},
		lastActive: time.Now(),
		acks:       make(chan ackMsg, 4096),
		kick:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	c.next = c.startSeq()
	srv := st.js.srv
	var err error
	if cfg.DeliverSubject != "" {
		c.push = &pullRequest{reply: cfg.DeliverSubject, heartbeat: time.Duration(cfg.Heartbeat), lastSent: time.Now()}
		if c.fcSub, err = srv.subscribeInternal("$JS.FC."+st.name+"."+cfg.Name+".>", c.captureFlowControl); err != nil {
			return nil, err
		}
	}
	if c.nextSub, err = srv.subscribeInternal(apiPrefix+"CONSUMER.MSG.NEXT."+st.name+"."+c.name, c.capturePull); err != nil {
		return nil, err
	}
	if c.ackSub, err = srv.subscribeInternal(c.ackBase+">", c.captureAck); err != nil {
		srv.unsubscribeInternal(c.nextSub)
		return nil, err
	}
	go c.run()
	return c, nil
}

// startSeq is where first deliveries begin: after what was delivered
// before a restart, or per the deliver policy for a new consumer.
func (c *consumer) startSeq() uint64 {
	if d := c.state.Info().Delivered.Stream; d > 0 {
		return d + 1
	}
	l := c.st.log
	s := l.State()
	first := max(s.FirstSeq, 1)
	switch c.cfg.DeliverPolicy {
	case "new":
		return s.LastSeq + 1
	case "last":
		var last uint64
		for _, f := range c.filterList() {
			last = max(last, l.LastSeqBySubject(f))
		}
		if last == 0 {
			return s.LastSeq + 1
		}
		return last
	case "by_start_sequence":
		return max(c.cfg.OptStartSeq, 1)
	case "by_start_time":
		return l.SeqAtTime(*c.cfg.OptStartTime)
	case "last_per_subject":
		for _, f := range c.filterList() {
			for subj := range l.SubjectCounts(f) {
				if seq := l.LastSeqBySubject(subj); seq != 0 {
					c.initial = append(c.initial, seq)
				}
			}
		}
		slices.Sort(c.initial)
		return s.LastSeq + 1
	}
	return first
}

// filterList is the filters, with ">" standing for none.
func (c *consumer) filterList() []string {
	if f := c.cfg.filters(); len(f) > 0 {
		return f
	}
	return []string{">"}
}

func (c *consumer) signal() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// captureAck queues an ack (client reader goroutine). The subject is
// $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>.
func (c *consumer) captureAck(subject, reply []byte, hdr int, msg []byte) bool {
	t := strings.Split(string(subject), ".")
	if len(t) != 9 {
		return true
	}
	seq, err := strconv.ParseUint(t[5], 10, 64)
	if err != nil {
		return true
	}
	body := msg
	if hdr >= 0 {
		body = msg[hdr:]
	}
	a := ackMsg{seq: seq, body: string(body), reply: string(reply)}
	select {
	case c.acks <- a:
	case <-c.stop:
	}
	c.signal()
	return true
}

// run is the consumer's goroutine.
func (c *consumer) run() {
	defer close(c.done)
	timer := time.NewTimer(consumerTick)
	defer timer.Stop()
	for {
		var acks []ackMsg
		select {
		case <-c.kick:
		case a := <-c.acks:
			acks = append(acks, a)
		case <-timer.C:
		case <-c.stop:
			return
		}
		for drained := false; !drained && len(acks) < maxAckBatch; {
			select {
			case a := <-c.acks:
				acks = append(acks, a)
			default:
				drained = true
			}
		}
		if len(acks) > 0 {
			c.processAcks(acks)
		}
		now := time.Now()
		c.expireRequests(now)
		c.pushHeartbeat(now)
		c.deliverAvailable()
		c.finishNoWait()
		if c.inactive(now) && c.expire() {
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(consumerTick)
	}
}

// inactive reports whether a consumer with an inactivity threshold has
// had no pulls or acks for that long.
func (c *consumer) inactive(now time.Time) bool {
	if c.cfg.InactiveThreshold <= 0 {
		return false
	}
	listening := c.push != nil && c.st.js.srv.hasInterest(c.push.reply)
	c.mu.Lock()
	defer c.mu.Unlock()
	if listening {
		c.lastActive = now
		return false
	}
	return len(c.waiting) == 0 && now.Sub(c.lastActive) > time.Duration(c.cfg.InactiveThreshold)
}

// expire removes a consumer that has been inactive for its threshold,
// from its own goroutine. It returns false if the consumer is already
// being closed by someone else (who will stop this goroutine).
func (c *consumer) expire() bool {
	if !c.claimClose() {
		return false
	}
	st := c.st
	st.mu.Lock()
	if st.consumers[c.name] == c {
		delete(st.consumers, c.name)
	}
	st.mu.Unlock()
	c.release("409 Consumer Deleted")
	if c.cfg.isDurable() && !c.cfg.MemoryStorage && st.config().Storage != "memory" {
		if err := st.log.DeleteConsumer(c.name); err != nil {
			st.js.log.Error("delete inactive consumer", "stream", st.name, "consumer", c.name, "err", err)
		}
	}
	return true
}

// deliverAvailable hands due redeliveries, then new messages, to waiting
// pulls in arrival order. Each pull's messages are recorded as one
// journaled step, so a batch costs one fsync.
func (c *consumer) deliverAvailable() {
	due := c.reapExhausted(c.state.Due())
	for {
		r := c.firstWaiting()
		if r == nil {
			return
		}
		var msgs []jetlog.Msg
		budget := r.maxBytes
		for len(msgs) < r.batch {
			msg, rest, ok := c.nextMessage(due)
			due = rest
			if !ok {
				break
			}
			size := len(msg.Subject) + len(msg.Header) + len(msg.Data)
			if r.hasBudget && size > budget || !c.replayDue(msg, len(msgs)) {
				c.undeliver(msg.Seq)
				break
			}
			budget -= size
			msgs = append(msgs, msg)
		}
		if len(msgs) == 0 {
			if r.hasBudget && c.hasMore(due) { // the next message is over the budget
				c.dropFirst()
				c.st.js.srv.sendInternal(r.reply, "", pendingStatus("409 Message Size Exceeds MaxBytes", r), nil)
				continue
			}
			return
		}
		sent := c.recordDeliveries(msgs)
		last := c.st.log.State().LastSeq // once per batch, for the pending counts
		for i, p := range sent {
			c.send(r, msgs[i], p, last)
		}
		for _, m := range msgs[len(sent):] {
			c.undeliver(m.Seq)
		}
		r.batch -= len(sent)
		if r.hasBudget {
			for _, m := range msgs[:len(sent)] {
				r.maxBytes -= len(m.Subject) + len(m.Header) + len(m.Data)
			}
		}
		switch {
		case r == c.push:
			c.flowControl(msgs[:len(sent)])
		case r.batch == 0 && r.hasBudget && r.maxBytes > 0:
			// The count ran out before the byte budget did; the
			// reference says so, so the client stops waiting for bytes.
			c.dropFirst()
			c.st.js.srv.sendInternal(r.reply, "", pendingStatus("409 Batch Completed", r), nil)
		case r.batch == 0 || r.hasBudget && r.maxBytes == 0:
			c.dropFirst()
		}
		if len(sent) < len(msgs) {
			return // max ack pending reached
		}
	}
}

// replayDue paces replay_policy original: a message goes out only once
// as much time has passed since the previous one as passed between their
// stores. n is how many messages this round has gathered already.
func (c *consumer) replayDue(msg jetlog.Msg, n int) bool {
	if c.cfg.ReplayPolicy != "original" {
		return true
	}
	if n > 0 { // one message per round, so each gets its own time
		return false
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.replayPrevStored.IsZero() && now.Sub(c.replayPrevSent) < msg.Time.Sub(c.replayPrevStored) {
		return false
	}
	c.replayPrevStored, c.replayPrevSent = msg.Time, now
	return true
}

// hasMore reports whether a message is waiting (used to tell a pull whose
// byte budget is too small from one with nothing to get).
func (c *consumer) hasMore(due []uint64) bool {
	if len(due) > 0 {
		return true
	}
	c.mu.Lock()
	from := c.next
	c.mu.Unlock()
	for _, f := range c.filterList() {
		if _, err := c.st.log.Next(from, f); err == nil {
			return true
		}
	}
	return false
}

// recordDeliveries records the deliveries of msgs in one step and returns
// their pending entries; fewer than len(msgs) when max ack pending stops
// it.
func (c *consumer) recordDeliveries(msgs []jetlog.Msg) []jetlog.Pending {
	out := make([]jetlog.Pending, 0, len(msgs))
	ackNone := c.cfg.AckPolicy == "none"
	limit := c.cfg.MaxAckPending
	// A delivery lost in a power cut is only delivered again, so it need
	// not wait for an fsync (at-least-once holds either way).
	err := c.state.ApplyLazy(func(s *jetlog.ConsumerState) error {
		for _, m := range msgs {
			if _, redelivery := s.Pending[m.Seq]; !redelivery && limit > 0 && len(s.Pending) >= limit {
				break
			}
			p := s.Deliver(m.Seq)
			switch {
			case ackNone:
				s.Ack(m.Seq)
			case c.cfg.BackOffJitter > 0:
				s.Nak(m.Seq, jitter(c.redeliveryWait(p.Deliveries), c.cfg.BackOffJitter))
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		c.st.js.log.Error("record deliveries", "stream", c.st.name, "consumer", c.name, "err", err)
		return nil
	}
	if !ackNone {
		c.mu.Lock()
		for _, p := range out {
			c.deliveries[p.Stream] = p.Deliveries
		}
		c.mu.Unlock()
	}
	return out
}

// undeliver puts back a message that was picked but not sent.
func (c *consumer) undeliver(seq uint64) {
	c.mu.Lock()
	if _, pending := c.deliveries[seq]; !pending && seq < c.next {
		c.next = seq
	}
	c.mu.Unlock()
}

// nextMessage picks the next message to deliver: a due redelivery first,
// then a last-per-subject start message, then the next new one.
func (c *consumer) nextMessage(due []uint64) (jetlog.Msg, []uint64, bool) {
	l := c.st.log
	for len(due) > 0 {
		seq := due[0]
		due = due[1:]
		msg, err := l.Get(seq)
		if err != nil { // gone from the stream: nothing to redeliver
			_, _ = c.state.Ack(seq)
			c.forget(seq)
			continue
		}
		return msg, due, true
	}
	c.mu.Lock()
	if len(c.initial) > 0 {
		seq := c.initial[0]
		c.initial = c.initial[1:]
		c.mu.Unlock()
		if msg, err := l.Get(seq); err == nil {
			return msg, due, true
		}
		return c.nextMessage(due)
	}
	from := c.next
	c.mu.Unlock()
	var best jetlog.Msg
	found := false
	for _, f := range c.filterList() {
		m, err := l.Next(from, f)
		if err == nil && (!found || m.Seq < best.Seq) {
			best, found = m, true
		}
	}
	if !found {
		return jetlog.Msg{}, due, false
	}
	c.mu.Lock()
	c.next = best.Seq + 1
	c.mu.Unlock()
	return best, due, true
}

// reapExhausted dead-letters the due seqs that have had max_deliver
// deliveries, at once rather than at the next pull (as the reference
// does), and returns the others.
func (c *consumer) reapExhausted(due []uint64) []uint64 {
	if c.cfg.MaxDeliver <= 0 {
		return due
	}
	kept := due[:0]
	for _, seq := range due {
		c.mu.Lock()
		n := c.deliveries[seq]
		c.mu.Unlock()
		if n >= uint64(c.cfg.MaxDeliver) {
			c.deadLetter(seq, n, "max_deliveries")
			continue
		}
		kept = append(kept, seq)
	}
	return kept
}

func (c *consumer) forget(seq uint64) {
	c.mu.Lock()
	delete(c.deliveries, seq)
	c.mu.Unlock()
}

// send delivers msg to the pull's inbox with the ack reply subject
// clients parse for metadata; last is the stream's last seq, for the
// pending count the subject carries.
func (c *consumer) send(r *pullRequest, msg jetlog.Msg, p jetlog.Pending, last uint64) {
	reply := c.ackBase + strconv.FormatUint(p.Deliveries, 10) + "." +
		strconv.FormatUint(msg.Seq, 10) + "." + strconv.FormatUint(p.Consumer, 10) + "." +
		strconv.FormatInt(msg.Time.UnixNano(), 10) + "." + strconv.FormatUint(last-min(last, msg.Seq), 10)
	r.lastSent = time.Now()
	hdr, data := msg.Header, msg.Data
	if c.cfg.HeadersOnly { // headers and the payload's size, not the payload
		hdr = withHeader(hdr, "Nats-Msg-Size", strconv.Itoa(len(data)))
		data = nil
	}
	c.st.js.srv.deliverInternal(r.reply, msg.Subject, reply, hdr, data)
}

// redeliveryWait is the back-off for the given delivery count, or the
// ack wait.
func (c *consumer) redeliveryWait(deliveries uint64) time.Duration {
	if b := c.cfg.BackOff; len(b) > 0 {
		return time.Duration(b[min(int(deliveries)-1, len(b)-1)])
	}
	return time.Duration(c.cfg.AckWait)
}

func jitter(d time.Duration, frac float64) time.Duration {
	return time.Duration(float64(d) * (1 + frac*(2*rand.Float64()-1)))
}
