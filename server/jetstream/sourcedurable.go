package jetstream

import (
	"strings"

	"github.com/bus-dev/bus/subjects"
)

// Durable consumer sourcing (API level 4, ADR-60): a mirror or source
// with "consumer": {"name", "deliver_subject"} copies through a push
// consumer its user made beforehand on the origin, with ack policy
// flow_control, rather than through one the sourcer makes. As the
// reference does, the sourcer listens on the consumer's deliver subject
// and asks the origin to reset the consumer
// ($JS.API.CONSUMER.RESET.<origin>.<consumer>, no body: delivery starts
// over after its ack floor); the reset's answer is the consumer's info,
// whose ack policy must be flow_control (10214 for a mirror, 10217 for a
// source). From there it copies as an external sourcer does
// (sourceexternal.go): its flow-control answers name the last origin seq
// the target stored, which acks it on the origin, so a work-queue or
// interest origin drops what was copied. A gap, a heartbeat naming an
// unseen delivery or silence resets the consumer again. The consumer is
// the user's: the sourcer never deletes it. A local origin is reached
// through this account's own API ($JS.API).

// durableSource is a mirror's or source's consumer on the origin.
type durableSource struct {
	Name           string `json:"name,omitempty"`
	DeliverSubject string `json:"deliver_subject,omitempty"`
}

// checkDurableSourcing validates the consumers of mirror and sources as
// the reference does: a valid name, a literal deliver subject, no start
// position nor filter of the source's own (the consumer has them), and
// one source per consumer.
func checkDurableSourcing(c *streamConfig) *apiError {
	valid := func(s *sourceConfig) bool {
		d := s.Consumer
		return subjects.ValidName(d.Name) && subjects.ValidLiteral(d.DeliverSubject) &&
			s.OptStartSeq == 0 && s.OptStartTime == nil && s.FilterSubject == ""
	}
	if m := c.Mirror; m != nil && m.Consumer != nil && !valid(m) {
		return newAPIError(400, 10213, "stream mirror consumer config is invalid")
	}
	seen := map[string]bool{}
	for _, s := range c.Sources {
		if s == nil || s.Consumer == nil {
			continue
		}
		if !valid(s) {
			return newAPIError(400, 10215, "stream source consumer config is invalid")
		}
		key := s.originName() + " " + s.Consumer.Name
		if seen[key] {
			return newAPIError(400, 10216, "duplicate stream source consumer detected")
		}
		seen[key] = true
	}
	return nil
}

// followDurable resets the durable consumer and copies what it
// delivers (see the top of the file); l listens on its deliver subject.
func (s *sourcer) followDurable(l *link, in *inbox) (outcome, bool) {
	d := s.cfg.Consumer
	subj := strings.ReplaceAll(s.ext.API+".CONSUMER.RESET."+s.cfg.Name+"."+d.Name, "..", ".")
	resp, out := s.ask(subj, nil, nil)
	if out != 0 {
		return out, false
	}
	if resp.Config.AckPolicy != "flow_control" {
		if s.mirror {
			s.setErr(newAPIError(400, 10214, "stream mirror consumer requires flow control ack policy"))
		} else {
			s.setErr(newAPIError(400, 10217, "stream source consumer requires flow control ack policy"))
		}
		return refused, false
	}
	l.name = resp.Name
	return s.copyFrom(l, in, resp)
}
