package jetstream

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// pullRequest is one waiting MSG.NEXT request, or a push consumer's
// standing request.
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

// pullBody is a pull request body as JSON.
type pullBody struct {
	Batch     int   `json:"batch"`
	Expires   int64 `json:"expires"`
	NoWait    bool  `json:"no_wait"`
	MaxBytes  int   `json:"max_bytes"`
	Heartbeat int64 `json:"idle_heartbeat"`
	*PullPriority
}

// parsePullRequest reads a pull request body: empty (batch 1), a bare
// number (the batch), or JSON (isJSON), whose priority part
// (machinepriority.go) comes back too, nil when it had none. A
// non-empty status is the error to send.
func parsePullRequest(body []byte, now time.Time) (req *pullRequest, pg *PullPriority, isJSON bool, status string) {
	req = &pullRequest{batch: 1, lastSent: now}
	text := strings.TrimSpace(string(body))
	if text == "" {
		return req, nil, false, ""
	}
	if n, err := strconv.Atoi(text); err == nil {
		req.batch = max(n, 1)
		return req, nil, false, ""
	}
	var r pullBody
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, false, "400 Bad Request"
	}
	if r.Heartbeat > 0 && r.Expires > 0 && 2*r.Heartbeat > r.Expires {
		return nil, nil, false, "400 Bad Request - heartbeat value too large"
	}
	req.batch = max(r.Batch, 1)
	req.noWait = r.NoWait
	req.maxBytes, req.hasBudget = r.MaxBytes, r.MaxBytes > 0
	req.heartbeat = time.Duration(r.Heartbeat)
	if r.Expires > 0 {
		req.expires = now.Add(time.Duration(r.Expires))
	}
	return req, r.PullPriority, true, ""
}

// queuePull adds a pull request answering to inbox, or answers it with
// the status that refuses it.
func (m *machine) queuePull(inbox string, body []byte, now time.Time) {
	req, pg, isJSON, status := parsePullRequest(body, now)
	if m.push != nil {
		status = "409 Consumer is push based"
	}
	if status == "" {
		status = m.pullLimits(req, now)
	}
	if status == "" && isJSON {
		pg, status = m.checkPull(pg, now)
	}
	if status != "" {
		m.status(inbox, statusHeader(status))
		return
	}
	req.reply = inbox
	m.lastActive = now
	if len(m.waiting) >= m.cfg.MaxWaiting {
		m.dropUnheard()
	}
	if len(m.waiting) >= m.cfg.MaxWaiting {
		m.status(inbox, statusHeader("409 Exceeded MaxWaiting"))
		return
	}
	if m.prio != nil {
		m.enqueue(req, pg)
		return
	}
	m.waiting = append(m.waiting, req)
}

// pullLimits refuses a pull beyond the consumer's max_batch, max_expires
// or max_bytes, as the reference does.
func (m *machine) pullLimits(req *pullRequest, now time.Time) string {
	c := &m.cfg
	switch {
	case c.MaxRequestBatch > 0 && req.batch > c.MaxRequestBatch:
		return "409 Exceeded MaxRequestBatch of " + strconv.Itoa(c.MaxRequestBatch)
	case c.MaxRequestExpires > 0 && !req.expires.IsZero() && req.expires.After(now.Add(time.Duration(c.MaxRequestExpires))):
		return "409 Exceeded MaxRequestExpires of " + time.Duration(c.MaxRequestExpires).String()
	case c.MaxRequestMaxBytes > 0 && req.hasBudget && req.maxBytes > c.MaxRequestMaxBytes:
		return "409 Exceeded MaxRequestMaxBytes of " + strconv.Itoa(c.MaxRequestMaxBytes)
	}
	return ""
}

// dropUnheard forgets the waiting pulls whose requester went away.
func (m *machine) dropUnheard() {
	kept := m.waiting[:0]
	for _, r := range m.waiting {
		if m.src.HasInterest(r.reply) {
			kept = append(kept, r)
		}
	}
	clear(m.waiting[len(kept):])
	m.waiting = kept
}

// expirePulls ends the pulls past their expiry with 408.
func (m *machine) expirePulls(now time.Time) {
	kept := m.waiting[:0]
	for _, r := range m.waiting {
		if !r.expires.IsZero() && !now.Before(r.expires) {
			if m.src.HasInterest(r.reply) {
				m.status(r.reply, pendingStatus("408 Request Timeout", r))
			}
			// The consumer was in use until the pull ran out: the
			// inactivity threshold counts from its expiry, as the
			// reference counts it, not from when it arrived.
			if r.expires.After(m.lastActive) {
				m.lastActive = r.expires
			}
			continue
		}
		kept = append(kept, r)
	}
	clear(m.waiting[len(kept):])
	m.waiting = kept
}

// heartbeat sends idle heartbeats to the pulls and the push subscriber
// that have had nothing for their heartbeat interval.
func (m *machine) heartbeat(now time.Time) {
	var hb []byte
	beat := func(r *pullRequest, stalled string) bool {
		if r.heartbeat <= 0 || now.Before(r.lastSent.Add(r.heartbeat)) {
			return false
		}
		r.lastSent = now
		if hb == nil || stalled != "" {
			info := m.ledger.Info()
			kv := []string{
				"Nats-Last-Consumer", strconv.FormatUint(info.Delivered.Consumer, 10),
				"Nats-Last-Stream", strconv.FormatUint(info.Delivered.Stream, 10),
			}
			if stalled != "" {
				// The subscriber missed the flow-control request (a
				// slow consumer drops it like any message): the
				// heartbeat names it, so the client answers it there,
				// as nats.go does for the reference's.
				kv = append(kv, "Nats-Consumer-Stalled", stalled)
			}
			hb = statusHeader("100 Idle Heartbeat", kv...)
		}
		m.status(r.reply, hb)
		return true
	}
	for _, r := range m.waiting {
		beat(r, "")
	}
	if m.push != nil && m.listening {
		stalled := ""
		if m.fcPending {
			stalled = m.fcReply
		}
		if beat(m.push, stalled) && m.needsFlowControlAck(true) {
			m.askFlowControl() // what is pending gets acked (ackflowcontrol.go)
		}
	}
}

func pendingStatus(status string, r *pullRequest) []byte {
	return statusHeader(status,
		"Nats-Pending-Messages", strconv.Itoa(r.batch),
		"Nats-Pending-Bytes", strconv.Itoa(r.maxBytes))
}

// finishNoWait answers no_wait pulls that could not be filled with 404.
func (m *machine) finishNoWait(now time.Time) {
	kept := m.waiting[:0]
	for _, r := range m.waiting {
		if r.noWait {
			m.status(r.reply, statusHeader("404 No Messages"))
			m.lastActive = now
		} else {
			kept = append(kept, r)
		}
	}
	clear(m.waiting[len(kept):])
	m.waiting = kept
}

// dropFirst removes the oldest pull once it is complete.
func (m *machine) dropFirst() {
	if len(m.waiting) > 0 {
		m.waiting[0] = nil
		m.waiting = m.waiting[1:]
	}
}

// Flow control: after this many bytes a push consumer asks its
// subscriber to confirm it is keeping up, and pauses until it does.
const flowControlWindow = 2 << 20

// flowControl counts pushed bytes and, past the window, sends the
// flow-control request that pauses delivery until it is answered.
func (m *machine) flowControl(sent []jetlog.Msg) {
	if !m.cfg.FlowControl || m.fcPending {
		return
	}
	for _, msg := range sent {
		m.fcBytes += len(msg.Subject) + len(msg.Header) + len(msg.Data)
	}
	if m.fcBytes >= flowControlWindow || m.needsFlowControlAck(false) {
		m.askFlowControl()
	}
}

// pullSizer sizes messages against a pull's max_bytes as the reference
// does (consumer.go, the size it hands nextWaiting): the subject, the
// ack reply subject, the header as delivered (with Nats-Msg-Size for
// headers_only, before any Nats-Pin-Id) and the payload. The reply is
// not built yet when gather sizes a message, so its length is worked out
// from the numbers it will hold: the delivery count, stream and consumer
// seqs, the timestamp and what is pending after the message. A zero
// pullSizer (no budget) sizes everything 0.
type pullSizer struct {
	on       bool
	consumer uint64 // the next delivery's consumer seq
	pending  uint64 // what is left to deliver before the next first delivery
}

// newPullSizer starts sizing at the machine's current position; call it
// before gather takes any candidate.
func (m *machine) newPullSizer(r *pullRequest) pullSizer {
	if !r.hasBudget {
		return pullSizer{}
	}
	return pullSizer{on: true, consumer: m.ledger.Info().Delivered.Consumer + 1, pending: m.pendingAfterNext()}
}

// next sizes msg as the next delivery of the gather and moves past it;
// gather stops at the first message it does not take, so sizing one it
// puts back does no harm.
func (z *pullSizer) next(m *machine, msg jetlog.Msg, from int) int {
	if !z.on {
		return 0
	}
	dc := uint64(1)
	if from == fromDue {
		dc += m.deliveries(msg.Seq)
	} else if z.pending > 0 {
		z.pending-- // a first delivery is no longer pending once sent
	}
	reply := len(m.ackBase) + digits(dc) + digits(msg.Seq) + digits(z.consumer) +
		digits(uint64(max(msg.Time.UnixNano(), 0))) + digits(z.pending) + 4 // the dots
	z.consumer++
	hdr, data := len(msg.Header), len(msg.Data)
	if m.cfg.HeadersOnly { // withHeader's "Nats-Msg-Size: n\r\n" before the blank line
		if hdr > 4 {
			hdr -= 2
		} else {
			hdr = len("NATS/1.0\r\n")
		}
		hdr += len("Nats-Msg-Size: ") + digits(uint64(data)) + 4
		data = 0
	}
	return len(msg.Subject) + reply + hdr + data
}

// deliveries is how often seq was delivered; 0 if it is not pending.
func (m *machine) deliveries(seq uint64) (n uint64) {
	_ = m.ledger.Update(func(s *jetlog.ConsumerState) {
		if p := s.Pending[seq]; p != nil {
			n = p.Deliveries
		}
	}, false)
	return n
}

// digits is how many decimal digits n is written with.
func digits(n uint64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
