package jetstream

import (
	"strconv"
	"time"

	"github.com/bus-dev/bus/header"
)

// Ack policy flow_control (API level 4, ADR-60), as nats-server 2.14
// added it for reliable sourcing: a push consumer with flow control whose
// deliveries are acked, as ack policy all acks them, by the answers to
// its flow-control requests. A sourcing stream answers one with where it
// stands (Nats-Last-Consumer, Nats-Last-Stream: flowControlReply), so
// everything up to the stream seq it names is acked. There is no ack
// subject (the consumer does not listen on $JS.ACK) and no redelivery by
// ack wait; a flow-control request goes out when max ack pending is
// reached and, while anything is pending, with each idle heartbeat, so a
// sourcer that stops pulling ahead still acks what it stored.

// ackFlowControlHeartbeat is the only idle heartbeat the policy takes:
// the reference's sourcing heartbeat, which its stall detection relies on.
const ackFlowControlHeartbeat = time.Second

// checkAckFlowControl applies the policy's defaults (flow control on, a
// 1 s heartbeat, as the reference outside its pedantic mode) and its
// rules, in the reference's order.
func (c *consumerConfig) checkAckFlowControl() *apiError {
	if c.AckPolicy != AckFlowControl {
		return nil
	}
	c.FlowControl, c.Heartbeat = true, int64(ackFlowControlHeartbeat)
	if c.MaxAckPending == 0 {
		c.MaxAckPending = defaultMaxAckPending
	}
	switch {
	case c.DeliverSubject == "":
		return newAPIError(400, 10218, "flow control ack policy requires a push based consumer")
	case c.MaxAckPending <= 0:
		return newAPIError(400, 10220, "flow control ack policy requires max ack pending")
	case c.AckWait != 0 || len(c.BackOff) > 0:
		return newAPIError(400, 10221, "flow control ack policy requires unset ack wait")
	case c.MaxDeliver > 0:
		return newAPIError(400, 10222, "flow control ack policy requires unset max deliver")
	}
	return nil
}

// noAckWait is the ledger's redelivery delay for a consumer without one
// (ack policy flow_control): far enough never to come.
const noAckWait = 100 * 365 * 24 * time.Hour

// ledgerAckWait is the redelivery delay the consumer's ledger keeps.
func ledgerAckWait(cfg consumerConfig) time.Duration {
	if cfg.AckPolicy == AckFlowControl {
		return noAckWait
	}
	return time.Duration(cfg.AckWait)
}

// flowControlAnswer is a reply to a flow-control request: the subject it
// answers and, from a sourcer, the last stream seq it stored (0: none).
type flowControlAnswer struct {
	subject    string
	lastStream uint64
}

// parseFlowControlAnswer reads an answer's Nats-Last-Stream header.
func parseFlowControlAnswer(subject []byte, hdr []byte) flowControlAnswer {
	a := flowControlAnswer{subject: string(subject)}
	if v := header.Value(hdr, "Nats-Last-Stream"); v != nil {
		if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			a.lastStream = n
		}
	}
	return a
}

// needsFlowControlAck reports whether an ack-flow-control consumer must
// ask now: max ack pending is reached, or (on a heartbeat) anything is
// pending, and no request is out.
func (m *machine) needsFlowControlAck(heartbeat bool) bool {
	if m.cfg.AckPolicy != AckFlowControl || m.fcPending || m.push == nil {
		return false
	}
	pending := m.ledger.NumAckPending()
	return pending > 0 && (heartbeat || pending >= m.cfg.MaxAckPending)
}

// askFlowControl sends a flow-control request, which pauses delivery
// until it is answered.
func (m *machine) askFlowControl() {
	m.fcPending = true
	m.fcCount++
	m.fcReply = m.fcBase + strconv.FormatUint(m.fcCount, 36)
	m.act.out = append(m.act.out, outMsg{to: m.push.reply, reply: m.fcReply, hdr: statusHeader("100 FlowControl Request")})
}
