package jetstream

import (
	"errors"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Consumer reset, as the reference has it: $JS.API.CONSUMER.RESET.
// <stream>.<consumer> with {"seq":N} starts a running consumer over at
// stream seq N: what it had pending is forgotten, the ack floor drops to
// N-1, and the next delivery is consumer seq 1 (an empty body resets to
// just after the ack floor). A consumer whose deliver policy is all may
// go anywhere; by_start_sequence and by_start_time not below their start;
// the others only back to the ack floor (10204 "invalid reset: …"). The
// reset is journaled (jetlog's kind 22), so a restart keeps it.
//
// Two differences: an unknown consumer gets 10014 (the reference's
// request goes unanswered: nobody listens on that subject), and a
// consumer with message groups (x_bus_group_by) cannot be reset, since
// its held-back messages are keyed to what it had pending.

const typeConsumerReset = "io.nats.jetstream.api.v1.consumer_reset_response"

type consumerResetResponse struct {
	consumerInfo
	ResetSeq uint64 `json:"reset_seq"`
}

// resetRequest is a reset handed to the consumer's goroutine; the result
// comes back on done.
type resetRequest struct {
	seq     uint64 // 0: after the ack floor
	timeSeq uint64 // by_start_time: the first seq at or after the start time
	done    chan resetResult
}

type resetResult struct {
	seq uint64
	err error
}

func (svc *Service) consumerReset(r apiRequest, streamName, name string) (any, *apiError) {
	var req struct {
		Seq uint64 `json:"seq"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	st, c, e := svc.lookupConsumer(streamName, name)
	if e != nil {
		return nil, e
	}
	rr := resetRequest{seq: req.Seq, done: make(chan resetResult, 1)}
	if t := c.cfg.OptStartTime; t != nil && c.cfg.DeliverPolicy == DeliverByStartTime {
		rr.timeSeq = st.log.SeqAtTime(*t)
	}
	select {
	case c.resets <- rr:
	case <-c.done:
		return nil, errConsumerNotFound()
	}
	res := <-rr.done
	if res.err != nil {
		return nil, newAPIError(400, 10204, "invalid reset: %v", res.err)
	}
	return consumerResetResponse{consumerInfo: c.info(typeConsumerReset), ResetSeq: res.seq}, nil
}

// Reset starts the consumer over at stream seq (0: after the ack floor),
// checked against its deliver policy; timeSeq is where a by_start_time
// consumer starts. It returns the seq it starts at and the step's
// actions: waiting pulls get what is now due.
func (m *machine) Reset(seq, timeSeq uint64, now time.Time) (uint64, actions, error) {
	switch {
	case m.groups != nil:
		return 0, m.step(now), errors.New("not allowed with message groups")
	case seq == 0:
		info := m.ledger.Info()
		seq = info.AckFloor.Stream + 1
		if info.Delivered.Stream == 0 && info.NumAckPending == 0 {
			// Nothing delivered yet: the floor is where the policy
			// started it (deliver new or last: after the stream's end).
			seq = max(seq, m.next)
		}
	case m.cfg.DeliverPolicy == DeliverAll:
	case m.cfg.DeliverPolicy == DeliverByStartSequence:
		if seq < m.cfg.OptStartSeq {
			return 0, m.step(now), errors.New("below start seq")
		}
	case m.cfg.DeliverPolicy == DeliverByStartTime:
		if seq < timeSeq {
			return 0, m.step(now), errors.New("below start time")
		}
	default:
		return 0, m.step(now), errors.New("not allowed")
	}
	seq = max(seq, 1)
	err := m.ledger.Update(func(s *jetlog.ConsumerState) { s.Reset(seq) }, true)
	if err != nil {
		return 0, m.step(now), err
	}
	m.next, m.initial = seq, nil
	m.redeliver = m.redeliver[:0]
	m.due = m.due[:0]
	clear(m.inDue)
	m.replayPrevStored, m.replayPrevSent, m.replayAt = time.Time{}, time.Time{}, time.Time{}
	return seq, m.step(now), nil
}
