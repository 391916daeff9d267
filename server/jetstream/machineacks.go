package jetstream

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nuid"

	"github.com/bus-dev/bus/jetlog"
)

// ackMsg is an ack copied off a client's reader goroutine: the stream
// seq from its subject, what its body says, and the reply subject of a
// double ack.
type ackMsg struct {
	seq   uint64
	kind  ackKind
	arg   string // after the kind: a NAK delay, a TERM reason, a NXT request
	reply string
}

// ackKind is what an ack body asks for.
type ackKind uint8

// The ack bodies clients send. An empty body is an ack; an unknown one
// is ignored, as by the reference.
const (
	ackAck        ackKind = iota // "+ACK", "+OK" or empty
	ackNext                      // "+NXT [request]": ack and pull to the reply subject
	ackNak                       // "-NAK [delay]"
	ackInProgress                // "+WPI"
	ackTerm                      // "+TERM [reason]"
	ackUnknown
)

// parseAck reads an ack body once, where it arrives. A plain ack
// allocates nothing (see BenchmarkParseAck).
func parseAck(seq uint64, body []byte, reply string) ackMsg {
	kind, arg, _ := bytes.Cut(body, []byte(" "))
	a := ackMsg{seq: seq, reply: reply}
	if arg = bytes.TrimSpace(arg); len(arg) > 0 {
		a.arg = string(arg)
	}
	switch string(kind) { // compared without a copy
	case "", "+ACK", "+OK":
		a.kind = ackAck
	case "+NXT":
		a.kind = ackNext
	case "-NAK":
		a.kind = ackNak
	case "+WPI":
		a.kind = ackInProgress
	case "+TERM":
		a.kind = ackTerm
	default:
		a.kind = ackUnknown
	}
	return a
}

// parseAckSubject reads the stream seq from an ack subject in either
// form (ackformat.go): v1, exactly nine tokens, the seq the sixth; v2,
// eleven or more, the seq the eighth. It does not split the subject: it
// runs for every ack, on the reader goroutine (see BenchmarkParseAck).
func parseAckSubject[S string | []byte](subject S) (uint64, bool) {
	tokens, start := 0, 0
	var v1, v2 S
	for i := 0; i <= len(subject); i++ {
		if i < len(subject) && subject[i] != '.' {
			continue
		}
		switch tokens {
		case 5:
			v1 = subject[start:i]
		case 7:
			v2 = subject[start:i]
		}
		tokens++
		start = i + 1
	}
	switch {
	case tokens == 9:
		return parseDecimal(v1)
	case tokens >= 11:
		return parseDecimal(v2)
	}
	return 0, false
}

// parseDecimal is strconv.ParseUint(s, 10, 64) without the conversion
// to a string or the error value.
func parseDecimal[S string | []byte](s S) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// applyAcks applies a batch of acks as one journaled step, then the
// effects that follow: retention, dead letters for terminated messages,
// confirmations of double acks and the pulls of +NXT.
func (m *machine) applyAcks(acks []ackMsg, now time.Time) {
	// A double ack is confirmed only once it is synced. A plain ack lost
	// in a power cut means one more delivery, which at-least-once allows,
	// so it does not wait for the fsync.
	sync := false
	for _, a := range acks {
		sync = sync || a.reply != ""
	}
	m.scratch.acks, m.scratch.terminated = acks, m.scratch.terminated[:0]
	m.scratch.ackNow = now.UnixNano()
	err := m.ledger.Update(m.ackStep, sync)
	terminated := m.scratch.terminated
	m.scratch.acks = nil
	m.sampler.report(m, now, err == nil)
	if err != nil {
		m.act.acked = nil
		m.act.err = err
		return // not durable: no confirmations
	}
	for _, t := range terminated {
		m.advise("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED", terminatedAdvisory{
			Type: "io.nats.jetstream.advisory.v1.terminated", ID: nuid.Next(), Timestamp: now.UTC(),
			Stream: m.stream, Consumer: m.name, ConsumerSeq: t.consumerSeq, StreamSeq: t.seq,
			Deliveries: t.deliveries, Reason: t.reason,
		})
		m.sendDeadLetter(t.seq, t.deliveries, "terminated", t.reason)
	}
	for _, a := range acks {
		switch {
		case a.reply == "":
		case a.kind == ackNext:
			// Ack and pull the next message(s) to the ack's reply subject.
			m.queuePull(a.reply, []byte(a.arg), now)
		default: // double ack: confirm with an empty message
			m.act.out = append(m.act.out, outMsg{to: a.reply})
		}
	}
}

// acksLocked is applyAcks' ledger step over scratch.acks.
func (m *machine) acksLocked(s *jetlog.ConsumerState) {
	for _, a := range m.scratch.acks {
		switch a.kind {
		case ackAck, ackNext:
			switch {
			case m.cfg.AckPolicy == AckAll || m.cfg.AckPolicy == AckFlowControl:
				// Every pending seq up to it is acked: retention hears of
				// each (interest and work-queue streams drop them).
				from := len(m.act.acked)
				for seq := range s.Pending {
					if seq <= a.seq {
						m.act.acked = append(m.act.acked, seq)
					}
				}
				slices.Sort(m.act.acked[from:])
				s.AckAll(a.seq)
				continue
			case m.groups != nil:
				m.sampler.ackedLocked(m, s, a.seq, m.scratch.ackNow)
				if _, left := m.releaseLocked(s, a.seq, m.scratch.ackNow); !left {
					continue // retention waits for the tombstone
				}
			default:
				m.sampler.ackedLocked(m, s, a.seq, m.scratch.ackNow)
				s.Ack(a.seq)
			}
			m.act.acked = append(m.act.acked, a.seq)
		case ackNak:
			p := s.Pending[a.seq]
			if p == nil || m.isTombstoneLocked(s, a.seq) {
				continue
			}
			delay := parseNakDelay(a.arg)
			if delay == 0 && m.cfg.NakBackOff {
				delay = m.jitter(m.redeliveryWait(p.Deliveries))
			}
			s.Nak(a.seq, m.groupNakDelay(delay))
			m.awaitAck(a.seq, p.Deadline)
		case ackInProgress:
			if m.isTombstoneLocked(s, a.seq) {
				continue
			}
			if s.InProgress(a.seq) {
				m.awaitAck(a.seq, s.Pending[a.seq].Deadline)
			}
		case ackTerm:
			var deliveries, cseq uint64
			if p := s.Pending[a.seq]; p != nil {
				deliveries, cseq = p.Deliveries, p.Consumer
			}
			// A TERM is an ack to retention, as in the reference: an
			// interest or work-queue stream drops the message now.
			if pending, left := m.releaseLocked(s, a.seq, m.scratch.ackNow); pending {
				m.scratch.terminated = append(m.scratch.terminated, termed{a.seq, deliveries, cseq, a.arg})
				if left {
					m.act.acked = append(m.act.acked, a.seq)
				}
			}
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
// dead-letter subject when one is configured. Without one, the message
// stays unacknowledged, as the reference keeps it (given up on: under
// the ack floor while anything else is pending, in the redelivered
// count, and in an interest or work-queue stream, until an ack reaches
// it); with one, or in message groups (whose next message must follow),
// it is handed on as acknowledged.
func (m *machine) deadLetter(seq, deliveries uint64, reason, detail string, now time.Time) {
	termed, left := false, false
	step := func(s *jetlog.ConsumerState) { termed, left = m.releaseLocked(s, seq, now.UnixNano()) }
	if m.cfg.DeadLetterSubject == "" && m.groups == nil {
		step = func(s *jetlog.ConsumerState) { termed = s.GiveUp(seq) }
	}
	if err := m.ledger.Update(step, false); err != nil || !termed {
		m.act.err = err
		return
	}
	if left {
		// Handed on as acknowledged: retention hears of it now, not at
		// the next restart (sweepRetained).
		m.act.acked = append(m.act.acked, seq)
	}
	m.advise("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES", maxDeliverAdvisory{
		Type: "io.nats.jetstream.advisory.v1.max_deliver", ID: nuid.Next(), Timestamp: now.UTC(),
		Stream: m.stream, Consumer: m.name, StreamSeq: seq, Deliveries: deliveries,
	})
	m.sendDeadLetter(seq, deliveries, reason, detail)
}

// The reference's advisories for messages a consumer gives up on, with
// its field names.
type maxDeliverAdvisory struct {
	Type       string    `json:"type"`
	ID         string    `json:"id"`
	Timestamp  time.Time `json:"timestamp"`
	Stream     string    `json:"stream"`
	Consumer   string    `json:"consumer"`
	StreamSeq  uint64    `json:"stream_seq"`
	Deliveries uint64    `json:"deliveries"`
}

type terminatedAdvisory struct {
	Type        string    `json:"type"`
	ID          string    `json:"id"`
	Timestamp   time.Time `json:"timestamp"`
	Stream      string    `json:"stream"`
	Consumer    string    `json:"consumer"`
	ConsumerSeq uint64    `json:"consumer_seq"`
	StreamSeq   uint64    `json:"stream_seq"`
	Deliveries  uint64    `json:"deliveries"`
	Reason      string    `json:"reason,omitempty"`
}

// advise publishes an advisory on prefix.<stream>.<consumer>.
func (m *machine) advise(prefix string, v any) {
	b, _ := json.Marshal(v) // plain fields cannot fail
	m.act.out = append(m.act.out, outMsg{to: prefix + "." + m.stream + "." + m.name, data: b})
}

// Headers bus adds to a dead-lettered copy (docs/api.md).
const (
	hdrDLQMsgID      = "Bus-Dlq-Msg-Id" // the original Nats-Msg-Id
	hdrDLQStream     = "Bus-Dlq-Stream"
	hdrDLQSubject    = "Bus-Dlq-Subject"
	hdrDLQSequence   = "Bus-Dlq-Sequence"
	hdrDLQConsumer   = "Bus-Dlq-Consumer"
	hdrDLQDeliveries = "Bus-Dlq-Deliveries"
	hdrDLQReason     = "Bus-Dlq-Reason"
)

// sendDeadLetter counts a dead letter and republishes seq to the
// dead-letter subject, if set, with its original headers plus where it
// came from and why.
func (m *machine) sendDeadLetter(seq, deliveries uint64, reason, detail string) {
	m.deadLettered++
	m.act.dead++
	if m.cfg.DeadLetterSubject == "" {
		return
	}
	msg, err := m.src.Get(seq)
	if err != nil {
		return
	}
	if detail != "" {
		reason += ": " + detail
	}
	// The copy is a message of its own: the original's preconditions
	// (Nats-Expected-*) would make the dead-letter stream refuse it, and
	// its msg id would make a second dead letter of the same message
	// (another consumer, a redrive) a duplicate. It gets an id naming
	// where and why it died, and keeps the original one aside.
	origID, _ := headerValue(msg.Header, "Nats-Msg-Id")
	hdr := withoutHeaders(msg.Header, func(k []byte) bool {
		return bytes.EqualFold(k, []byte("Nats-Msg-Id")) || len(k) >= 14 && bytes.EqualFold(k[:14], []byte("Nats-Expected-"))
	})
	id := "dlq." + m.stream + "." + strconv.FormatUint(seq, 10) + "." + m.name + "." + strconv.FormatUint(deliveries, 10)
	hdr = withHeader(hdr, "Nats-Msg-Id", id)
	if origID != "" {
		hdr = withHeader(hdr, hdrDLQMsgID, origID)
	}
	for _, kv := range [][2]string{
		{hdrDLQStream, m.stream},
		{hdrDLQSubject, msg.Subject},
		{hdrDLQSequence, strconv.FormatUint(seq, 10)},
		{hdrDLQConsumer, m.name},
		{hdrDLQDeliveries, strconv.FormatUint(deliveries, 10)},
		{hdrDLQReason, strings.NewReplacer("\r", " ", "\n", " ").Replace(reason)},
	} {
		hdr = withHeader(hdr, kv[0], kv[1])
	}
	// The reply brings the dead-letter stream's pub ack back to the
	// service, which counts and logs a dead letter it refused.
	m.act.out = append(m.act.out, outMsg{to: m.cfg.DeadLetterSubject, reply: deadLetterAckPrefix + m.stream + "." + m.name,
		hdr: hdr, data: msg.Data, deadLetter: true})
}
