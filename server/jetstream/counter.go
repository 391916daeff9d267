package jetstream

import (
	"encoding/json"
	"errors"
	"math/big"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// Counters (allow_msg_counter), as nats-server 2.12 added them: every
// publish to a counter stream carries Nats-Incr, a signed integer of any
// size, and no payload; the stream stores the subject's new total as
// {"val":"<n>"} (with the Nats-Incr header kept) and acks it with "val".
// The total is the subject's last stored value plus the increment, so a
// purge or a delete of the last message restarts or rewinds it.
//
// An increment reads the last value and appends the next one under
// stream.counterMu, with the read seq as the append's expected subject
// seq: increments of one stream are serialised (one commit each), and a
// purge or delete racing the read makes the append fail and read again
// rather than store a total computed from a message that is gone.

const hdrIncr = "Nats-Incr"

// hdrCounterSources is where what each sourced stream's subjects last
// contributed is kept (countersources.go); an increment carries it over
// from the last value.
const hdrCounterSources = "Nats-Counter-Sources"

func errIncrDisabled() *apiError { return newAPIError(400, 10168, "message counters is disabled") }
func errIncrMissing() *apiError {
	return newAPIError(400, 10169, "message counter increment is missing")
}
func errIncrPayload() *apiError { return newAPIError(400, 10170, "message counter has payload") }
func errIncrInvalid() *apiError {
	return newAPIError(400, 10171, "message counter increment is invalid")
}
func errCounterBroken() *apiError { return newAPIError(400, 10172, "message counter is broken") }

// counterIncompatible are the headers an increment cannot carry: its
// total depends on the last value, not on an expected state.
var counterIncompatible = []string{
	"Nats-Rollup", "Nats-Expected-Stream", "Nats-Expected-Last-Msg-Id",
	"Nats-Expected-Last-Subject-Sequence-Subject", "Nats-Expected-Last-Sequence",
	"Nats-Expected-Last-Subject-Sequence",
}

// parseIncr reads a publish's Nats-Incr: nil without one (or with an
// empty one), ok false for one that is not a base-10 integer.
func parseIncr(hdr []byte) (*big.Int, bool) {
	v := header.Value(hdr, hdrIncr)
	if len(v) == 0 {
		return nil, true
	}
	return new(big.Int).SetString(string(v), 10)
}

// checkIncr applies the reference's rules to a publish's increment on a
// stream that is (counter) or is not a counter stream. It returns the
// increment, nil if the publish has none.
func checkIncr(hdr, data []byte, counter bool) (*big.Int, *apiError) {
	incr, ok := parseIncr(hdr)
	switch {
	case !ok:
		return nil, errIncrInvalid()
	case incr == nil:
		return nil, nil
	case !counter:
		return nil, errIncrDisabled()
	case len(data) > 0:
		return nil, errIncrPayload()
	}
	for _, k := range counterIncompatible {
		if header.Value(hdr, k) != nil {
			return nil, errIncrInvalid()
		}
	}
	return incr, nil
}

// checkCounterPublish vets a publish to a counter stream in the
// reference's order: the increment, the expected stream, a TTL (which a
// counter stream never allows), then an increment is required.
func (st *stream) checkCounterPublish(m jetlog.Msg) (*big.Int, *apiError) {
	incr, e := checkIncr(m.Header, m.Data, true)
	if e != nil {
		return nil, e
	}
	if v := header.Value(m.Header, "Nats-Expected-Stream"); v != nil && string(v) != st.name {
		return nil, errExpectedStream()
	}
	if header.Value(m.Header, "Nats-TTL") != nil {
		if _, e := st.checkTTL(m.Header); e != nil {
			return nil, e
		}
	}
	if incr == nil {
		return nil, errIncrMissing()
	}
	return incr, nil
}

// counterValue is the stored form of a total.
type counterValue struct {
	Val string `json:"val"`
}

// counterBody encodes a total as the reference stores it.
func counterBody(v *big.Int) []byte {
	b := append(make([]byte, 0, 16), `{"val":"`...)
	b = v.Append(b, 10)
	return append(b, `"}`...)
}

// lastCounter reads subject's current total (0 if nothing is stored), the
// seq holding it and the sources header it carried.
func (st *stream) lastCounter(subject string) (*big.Int, uint64, []byte, *apiError) {
	total := new(big.Int)
	last, err := st.log.LastBySubject(subject)
	if errors.Is(err, jetlog.ErrNotFound) {
		return total, 0, nil, nil
	}
	if err != nil {
		return nil, 0, nil, storeError(err)
	}
	var v counterValue
	if json.Unmarshal(last.Data, &v) != nil {
		return nil, 0, nil, errCounterBroken()
	}
	if _, ok := total.SetString(v.Val, 10); !ok && v.Val != "" {
		return nil, 0, nil, errCounterBroken()
	}
	return total, last.Seq, header.Value(last.Header, hdrCounterSources), nil
}

// publishCounter handles every publish to a counter stream: an atomic
// batch goes to the batch path, anything else must be an increment. It
// runs on the publisher's reader goroutine and waits for the commit, and
// it owns p.
func (st *stream) publishCounter(p *pub, m jetlog.Msg, hdr int) {
	if hdr >= 0 {
		m.Header, m.Data = p.buf[:hdr:hdr], p.buf[hdr:]
	}
	if id := header.Value(m.Header, hdrBatchID); len(id) > 0 {
		st.publishBatchMsg(p, m, string(id))
		return
	}
	defer st.pubs.Put(p)
	incr, e := st.checkCounterPublish(m)
	if e != nil && e.ErrCode == errIncrMissing().ErrCode && header.Value(m.Header, "Nats-Msg-Id") != nil {
		st.resendCounter(p, m)
		return
	}
	if e != nil {
		st.ackError(p.reply, e)
		return
	}
	var total *big.Int
	out, ack, err := st.appendCounter(m.Subject, func(last *big.Int, sources []byte) (jetlog.Msg, error) {
		total = last.Add(last, incr)
		out := m
		out.Data = counterBody(total)
		if sources != nil {
			out.Header = withHeader(m.Header, hdrCounterSources, string(sources))
		}
		return out, nil
	})
	var refused *apiError
	if errors.As(err, &refused) {
		st.ackError(p.reply, refused)
		return
	}
	p.msg = out
	st.counterStored(p, ack, err, total)
}

// resendCounter answers a counter publish without an increment that has
// a msg id: a duplicate within the window is acked as one (a client that
// resends what it published, or publishes again under an id it used, is
// told it is stored), anything else is refused for want of an increment.
func (st *stream) resendCounter(p *pub, m jetlog.Msg) {
	ack, err := st.log.Append(m, jetlog.Expect{DuplicateOnly: true})
	if errors.Is(err, jetlog.ErrNotDuplicate) {
		st.ackError(p.reply, errIncrMissing())
		return
	}
	p.msg = m
	st.counterStored(p, ack, err, nil)
}

// appendCounter stores the next value of subject's counter: next makes
// the message to store from the current total and the sources header it
// carries. It runs under counterMu, with the read seq as the append's
// expected subject seq, so a purge or delete between the read and the
// append makes it read again rather than store a total computed from a
// message that is gone. A refusal (a broken counter) is an *apiError.
func (st *stream) appendCounter(subject string, next func(total *big.Int, sources []byte) (jetlog.Msg, error)) (jetlog.Msg, jetlog.PubAck, error) {
	st.counterMu.Lock()
	defer st.counterMu.Unlock()
	var out jetlog.Msg
	var ack jetlog.PubAck
	var err error
	for range 3 {
		total, seq, sources, e := st.lastCounter(subject)
		if e != nil {
			return out, ack, e
		}
		if out, err = next(total, sources); err != nil {
			return out, ack, err
		}
		ack, err = st.log.Append(out, jetlog.Expect{LastSubjectSeq: seq, HasLastSubjectSeq: true})
		if !errors.Is(err, jetlog.ErrWrongLastSeq) {
			break
		}
	}
	return out, ack, err
}

// counterStored is pub.stored for an increment, which completes on the
// publisher's goroutine rather than the appender's: its ack carries the
// total.
func (st *stream) counterStored(p *pub, ack jetlog.PubAck, err error, total *big.Int) {
	if err != nil {
		if isDiskError(err) && !st.writeFailing.Swap(true) {
			st.sh.log.Error("stream writes failing; its publishes are refused", "stream", st.name, "err", err)
		}
		st.ackError(p.reply, storeError(err))
		return
	}
	if p.reply != "" {
		b := appendPubAck(p.ackBuf[:0], st.name, st.sh.domain, ack)
		if !ack.Duplicate {
			b = append(b[:len(b)-1], `,"val":"`...)
			b = total.Append(b, 10)
			b = append(b, `"}`...)
		}
		p.ackBuf = b
		st.sh.core.Publish(p.reply, "", nil, b)
	}
	st.afterStore(p, ack)
}

// afterStore is what follows a publish stored off the appender
// goroutine (counters, atomic batches): the stats, the consumers and
// republish.
func (st *stream) afterStore(p *pub, ack jetlog.PubAck) {
	if st.writeFailing.Load() && st.writeFailing.Swap(false) {
		st.sh.log.Info("stream writes again", "stream", st.name)
	}
	st.publishes.stored(p.start, ack.Duplicate)
	st.notifyConsumers()
	if t := st.tr.Load(); t.republish != nil && !ack.Duplicate {
		m := p.msg
		m.Time = time.Unix(0, ack.TS)
		st.republish(t, m, ack.Seq)
	}
}

// checkCounterConfig applies the reference's rules to a counter stream's
// config: what a total computed from the last value cannot live with.
func (c *streamConfig) checkCounterConfig() *apiError {
	if !c.AllowMsgCounter {
		return nil
	}
	switch {
	case c.Discard == jetlog.DiscardNew:
		return errStreamConfig("counter stream cannot use discard new")
	case c.AllowMsgTTL:
		return errStreamConfig("counter stream cannot use message TTLs")
	case c.AllowMsgSchedules:
		return errStreamConfig("counter stream cannot use message schedules")
	case c.Retention != jetlog.RetentionLimits:
		return errStreamConfig("counter stream can only use limits retention")
	}
	return nil
}

// checkMirrorPublish refuses, on a mirror, the kinds of publish it could
// never take (a mirror stores what its origin stored).
func (c *streamConfig) checkMirrorPublish() *apiError {
	if c.Mirror == nil {
		return nil
	}
	switch {
	case c.AllowMsgCounter:
		return newAPIError(400, 10173, "stream mirrors can not also calculate counters")
	case c.AllowAtomic:
		return newAPIError(400, 10198, "stream mirrors can not also use atomic publishing")
	case c.AllowBatched:
		return newAPIError(400, 10209, "stream mirrors can not also use batch publishing")
	}
	return nil
}
