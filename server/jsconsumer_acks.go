package server

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nuid"

	"github.com/bus-dev/bus/jetlog"
)

// processAcks applies a batch of acks on the consumer's goroutine as one
// journaled step, then the effects that follow: retention, dead letters
// for terminated messages, and replies to double acks.
func (c *consumer) processAcks(acks []ackMsg) {
	c.mu.Lock()
	c.lastActive = time.Now()
	deliveries := make([]uint64, len(acks))
	for i, a := range acks {
		deliveries[i] = c.deliveries[a.seq]
	}
	c.mu.Unlock()
	var acked, terminated []int // indexes into acks
	// Acks are synced before anyone is told they are done: a double ack
	// waits for its fsync. A plain ack lost in a power cut means one more
	// delivery, which at-least-once allows, so it does not wait.
	apply := c.state.ApplyLazy
	for _, a := range acks {
		if a.reply != "" {
			apply = c.state.Apply
			break
		}
	}
	err := apply(func(s *jetlog.ConsumerState) error {
		for i, a := range acks {
			kind, arg, _ := strings.Cut(a.body, " ")
			switch kind {
			case "", "+ACK", "+OK", "+NXT":
				if c.cfg.AckPolicy == "all" {
					s.AckAll(a.seq)
				} else {
					s.Ack(a.seq)
				}
				acked = append(acked, i)
			case "-NAK":
				delay := parseNakDelay(arg)
				if delay == 0 && c.cfg.NakBackOff {
					delay = jitter(c.redeliveryWait(max(deliveries[i], 1)), c.cfg.BackOffJitter)
				}
				s.Nak(a.seq, delay)
			case "+WPI":
				s.InProgress(a.seq)
			case "+TERM":
				if s.Term(a.seq) {
					terminated = append(terminated, i)
				}
			}
		}
		return nil
	})
	if err != nil {
		c.st.js.log.Error("consumer acks", "stream", c.st.name, "consumer", c.name, "err", err)
		return // not durable: no confirmations
	}
	for _, i := range acked {
		c.forgetAcked(acks[i].seq)
		c.st.acked(acks[i].seq)
	}
	for _, i := range terminated {
		a := acks[i]
		c.forget(a.seq)
		_, reason, _ := strings.Cut(a.body, " ")
		c.sendDeadLetter(a.seq, deliveries[i], "terminated", strings.TrimSpace(reason))
	}
	for _, a := range acks {
		kind, arg, _ := strings.Cut(a.body, " ")
		switch {
		case a.reply == "":
		case kind == "+NXT":
			// Ack and pull the next message(s) to the ack's reply subject.
			c.queuePull(a.reply, []byte(strings.TrimSpace(arg)))
		default: // double ack: confirm with an empty message
			c.st.js.srv.sendInternal(a.reply, "", nil, nil)
		}
	}
}

// forgetAcked drops the delivery counts an ack settled.
func (c *consumer) forgetAcked(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.AckPolicy != "all" {
		delete(c.deliveries, seq)
		return
	}
	for s := range c.deliveries {
		if s <= seq {
			delete(c.deliveries, s)
		}
	}
}

// parseNakDelay reads "-NAK {"delay": ns}" or a Go duration ("-NAK 5s").
func parseNakDelay(arg string) time.Duration {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return 0
	}
	var d struct {
		Delay int64 `json:"delay"`
	}
	if json.Unmarshal([]byte(arg), &d) == nil {
		return time.Duration(d.Delay)
	}
	if v, err := time.ParseDuration(arg); err == nil {
		return v
	}
	return 0
}

// deadLetter gives up on seq after max deliveries: it is no longer
// pending, the reference's advisory is published, and a copy goes to the
// dead-letter subject when one is configured.
func (c *consumer) deadLetter(seq, deliveries uint64, reason string) {
	if ok, _ := c.state.Term(seq); !ok {
		return
	}
	c.forget(seq)
	advisory, _ := json.Marshal(struct {
		Type       string    `json:"type"`
		ID         string    `json:"id"`
		Timestamp  time.Time `json:"timestamp"`
		Stream     string    `json:"stream"`
		Consumer   string    `json:"consumer"`
		StreamSeq  uint64    `json:"stream_seq"`
		Deliveries uint64    `json:"deliveries"`
	}{"io.nats.jetstream.advisory.v1.max_deliver", nuid.Next(), time.Now().UTC(), c.st.name, c.name, seq, deliveries})
	c.st.js.srv.sendInternal("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."+c.st.name+"."+c.name, "", nil, advisory)
	c.sendDeadLetter(seq, deliveries, reason, "")
}

// Headers bus adds to a dead-lettered copy.
const (
	hdrDLQStream     = "Bus-Dlq-Stream"
	hdrDLQSubject    = "Bus-Dlq-Subject"
	hdrDLQSequence   = "Bus-Dlq-Sequence"
	hdrDLQConsumer   = "Bus-Dlq-Consumer"
	hdrDLQDeliveries = "Bus-Dlq-Deliveries"
	hdrDLQReason     = "Bus-Dlq-Reason"
)

// sendDeadLetter republishes seq to the dead-letter subject, if set,
// with its original headers plus where it came from and why.
func (c *consumer) sendDeadLetter(seq, deliveries uint64, reason, detail string) {
	c.mu.Lock()
	c.deadLettered++
	c.mu.Unlock()
	c.st.js.deadLettered.Add(1)
	if c.cfg.DeadLetterSubject == "" {
		return
	}
	msg, err := c.st.log.Get(seq)
	if err != nil {
		return
	}
	if detail != "" {
		reason += ": " + detail
	}
	hdr := msg.Header
	for _, kv := range [][2]string{
		{hdrDLQStream, c.st.name},
		{hdrDLQSubject, msg.Subject},
		{hdrDLQSequence, strconv.FormatUint(seq, 10)},
		{hdrDLQConsumer, c.name},
		{hdrDLQDeliveries, strconv.FormatUint(deliveries, 10)},
		{hdrDLQReason, strings.NewReplacer("\r", " ", "\n", " ").Replace(reason)},
	} {
		hdr = withHeader(hdr, kv[0], kv[1])
	}
	c.st.js.srv.sendInternal(c.cfg.DeadLetterSubject, "", hdr, msg.Data)
}

// acked applies retention after a consumer acked seq: a work queue drops
// it at once; an interest stream once every consumer is past it.
func (st *stream) acked(seq uint64) {
	st.mu.Lock()
	retention := st.cfg.Retention
	others := make([]*consumer, 0, len(st.consumers))
	for _, c := range st.consumers {
		others = append(others, c)
	}
	st.mu.Unlock()
	switch retention {
	case "workqueue":
	case "interest":
		for _, c := range others {
			if !c.doneWith(seq) {
				return
			}
		}
	default:
		return
	}
	_ = st.log.Delete(seq) // already gone is fine
}

// doneWith reports whether the consumer has acked seq (or will never see
// it because of its filter).
func (c *consumer) doneWith(seq uint64) bool {
	c.mu.Lock()
	_, pending := c.deliveries[seq]
	next := c.next
	c.mu.Unlock()
	return !pending && seq < next
}
