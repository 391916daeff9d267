package jetstream

import (
	"errors"
	"math/big"
	"strconv"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// commitBatch checks a committed batch message by message, in the
// reference's order, and stores it whole (jetlog.AppendAtomic); the
// preconditions that depend on what the stream holds are checked by the
// appender where the batch gets its seqs, and a Nats-Rollup is done in
// the batch's own commit (jetlog.Expect.Rollup), so a crash leaves the
// stream as before the batch or as after it, rollups included, never in
// between. Only the commit is acked, with the last seq, the batch id
// and its size.
func (st *stream) commitBatch(p *pub, id string, msgs []jetlog.Msg, cfg streamConfig) {
	expects := make([]jetlog.Expect, len(msgs))
	written := map[string]bool{} // subjects earlier messages of the batch write
	totals := map[string]*big.Int{}
	if cfg.AllowMsgCounter {
		// Totals read here must not move before the batch is stored.
		st.counterMu.Lock()
		defer st.counterMu.Unlock()
	}
	lastSeq := st.log.State().LastSeq
	for i := range msgs {
		m := &msgs[i]
		e := st.checkBatchMsg(m, i, &expects[i], written, totals, lastSeq, cfg)
		if e != nil {
			st.ackError(p.reply, e)
			return
		}
		written[m.Subject] = true
	}
	acks, err := st.log.AppendAtomic(msgs, expects)
	if err != nil {
		if errors.Is(err, jetlog.ErrBatchDuplicate) {
			st.ackError(p.reply, newAPIError(400, 10201, "atomic publish batch contains duplicate message id"))
			return
		}
		if isDiskError(err) && !st.writeFailing.Swap(true) {
			st.sh.log.Error("stream writes failing; its publishes are refused", "stream", st.name, "err", err)
		}
		st.ackError(p.reply, storeError(err))
		return
	}
	last := acks[len(acks)-1]
	if p.reply != "" {
		b := appendPubAck(make([]byte, 0, 128), st.name, st.sh.domain, last)
		b = append(b[:len(b)-1], `,"batch":`...)
		b = strconv.AppendQuote(b, id)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(len(msgs)), 10)
		b = append(b, '}')
		st.sh.core.Publish(p.reply, "", nil, b)
	}
	for i, ack := range acks {
		p.msg = msgs[i]
		st.noteStored(msgs[i], ack) // a schedule among them is held now, not only after a restart
		st.afterStore(p, ack)
	}
}

// checkBatchMsg checks message i of a batch, given the subjects the
// batch wrote before it and the stream's last seq before the batch, and
// fills in its expect. A counter's increment becomes its total here.
func (st *stream) checkBatchMsg(m *jetlog.Msg, i int, ex *jetlog.Expect, written map[string]bool, totals map[string]*big.Int, lastSeq uint64, cfg streamConfig) *apiError {
	hdr := m.Header
	if header.Value(hdr, "Nats-Expected-Last-Msg-Id") != nil {
		return newAPIError(400, 10177, "atomic publish unsupported header used: Nats-Expected-Last-Msg-Id")
	}
	incr, e := checkIncr(hdr, m.Data, cfg.AllowMsgCounter)
	if e != nil {
		return e
	}
	if v := header.Value(hdr, "Nats-Expected-Stream"); v != nil && string(v) != st.name {
		return errExpectedStream()
	}
	if len(hdr) > 0 {
		// Schedule headers as a publish's, against the owner each
		// message got when it was staged (scheduleowner.go).
		if e := st.checkBatchSchedule(m); e != nil {
			return e
		}
		hdr = m.Header
	}
	if header.Value(hdr, "Nats-TTL") != nil {
		var e *apiError
		if m.Header, e = st.checkTTL(hdr); e != nil {
			return e
		}
		hdr = m.Header
	}
	if cfg.AllowMsgCounter {
		if incr == nil {
			return errIncrMissing()
		}
		total, ok := totals[m.Subject]
		if !ok {
			var e *apiError
			if total, _, _, e = st.lastCounter(m.Subject); e != nil {
				return e
			}
		}
		total = new(big.Int).Add(total, incr)
		totals[m.Subject] = total
		m.Data = counterBody(total)
	}
	if v, ok := headerValue(hdr, "Nats-Expected-Last-Sequence"); ok {
		want := parseExpectedSeq(v)
		switch {
		case want != lastSeq:
			return errWrongLastSeq(lastSeq)
		case i > 0: // only the first message may expect the stream's last seq
			return errWrongLastSeqConstant()
		}
		ex.LastSeq, ex.HasLastSeq = want, true
	}
	if v, ok := headerValue(hdr, "Nats-Expected-Last-Subject-Sequence"); ok {
		subj, _ := headerValue(hdr, "Nats-Expected-Last-Subject-Sequence-Subject")
		if subj == "" {
			subj = m.Subject
		}
		if written[subj] { // the batch itself moved it
			return errWrongLastSeqConstant()
		}
		ex.LastSubjectSeq, ex.LastSubject, ex.HasLastSubjectSeq = parseExpectedSeq(v), subj, true
	}
	if kind, ok := headerValue(hdr, "Nats-Rollup"); ok {
		switch {
		case !cfg.AllowRollup || cfg.DenyPurge:
			return newAPIError(500, 10111, "rollup not permitted")
		case kind == "sub" && written[m.Subject]:
			return newAPIError(500, 10111, "batch rollup sub invalid")
		case kind == "all" && i > 0:
			return newAPIError(500, 10111, "batch rollup all invalid")
		case kind != "sub" && kind != "all":
			return newAPIError(500, 10111, "rollup value invalid: %q", kind)
		}
		ex.Rollup = jetlog.RollupAll
		if kind == "sub" {
			ex.Rollup = jetlog.RollupSubject
		}
	}
	return nil
}

func errWrongLastSeqConstant() *apiError {
	return newAPIError(400, 10164, "wrong last sequence")
}
