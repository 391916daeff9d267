package jetstream

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// Fast batch publish (allow_batched, API level 4, ADR-50), as nats-server
// 2.14 added it: the publisher sends the messages of a batch with reply
// subjects <inbox>.<id>.<flow>.<gap>.<seq>.<op>.$FI, op 0 for the first,
// 1 for the next ones, 2 for the last (which commits), 3 for an end of
// batch that is no message, 4 for a ping asking where the batch stands.
// Unlike an atomic batch, each message is stored as it arrives (through
// the appender like any publish, so a publisher's messages pipeline and
// share fsyncs), and nothing is staged: what a batch costs the server is
// its few counters (batchfastflow.go). The messages of a "fail" batch
// are appended as one jetlog.Group, so that the store refuses every
// message queued behind one it refused, and nothing after a refused
// message is stored.

// The ops of a fast batch reply subject (a wire format).
const (
	fastStart = iota
	fastAppend
	fastCommit
	fastCommitEOB
	fastPing
)

// fastBatchMsg is what a fast batch message's reply subject says.
type fastBatchMsg struct {
	id    string
	seq   uint64
	flow  uint16 // acks at most every flow messages; 10 when not > 0
	gapOK bool   // gap mode "ok": a lost message does not end the batch
	op    int
}

// parseFastBatch reads a reply subject ending in .$FI, as the reference
// reads it; false means the pattern is invalid (10206).
func parseFastBatch(reply string) (fastBatchMsg, bool) {
	var m fastBatchMsg
	rest := strings.TrimSuffix(reply, fastBatchSuffix)
	t := strings.Split(rest, ".")
	if len(t) < 6 { // the inbox has at least one token
		return m, false
	}
	t = t[len(t)-5:]
	op, err := strconv.Atoi(t[4])
	if err != nil || op < fastStart || op > fastPing || t[4][0] == '+' || t[4][0] == '-' {
		return m, false
	}
	seq, err := strconv.ParseUint(t[3], 10, 64)
	switch {
	case err != nil || t[3][0] == '+' || seq == 0 || seq == ^uint64(0):
		return m, false
	case seq == 1 && op == fastCommitEOB, op == fastStart && seq != 1, op == fastAppend && seq <= 1:
		return m, false
	case t[2] != "fail" && t[2] != "ok":
		return m, false
	}
	m.id, m.seq, m.op, m.gapOK = t[0], seq, op, t[2] == "ok"
	m.flow = 10
	if f, err := strconv.ParseInt(t[1], 10, 64); err == nil && f > 0 && t[1][0] != '+' {
		m.flow = uint16(min(f, 1<<16-1))
	}
	return m, true
}

// publishFast takes a message whose reply ends in .$FI, on the
// publisher's reader goroutine. answer is where errors and the pub ack
// go ("" on a no_ack stream); flow acks, gaps and errors go to the reply
// whatever no_ack says, as the reference's.
func (st *stream) publishFast(subject, reply []byte, hdr int, msg []byte) {
	to := string(reply)
	answer := to
	if st.noAck.Load() {
		answer = ""
	}
	cfg := st.config()
	tr := st.tr.Load()
	var e *apiError
	switch {
	case st.sealed.Load():
		e = errStreamSealed()
	case st.full():
		e = st.fullError()
	case tr.refused != nil:
		e = tr.refused
	case cfg.MaxMsgSize >= 0 && len(msg) > int(cfg.MaxMsgSize):
		e = errMsgTooLarge()
	case !cfg.AllowBatched:
		e = newAPIError(400, 10205, "batch publish is disabled")
	}
	m, ok := parseFastBatch(to)
	switch {
	case e != nil:
	case !ok:
		e = newAPIError(400, 10206, "batch publish pattern is invalid")
	case len(m.id) > maxBatchID:
		e = newAPIError(400, 10207, "batch publish ID is invalid")
	}
	if e != nil {
		st.ackError(answer, e)
		return
	}
	p, _ := st.pubs.Get().(*pub)
	if p == nil {
		p = &pub{st: st}
		p.done = p.stored
	}
	p.subject, p.reply, p.fast, p.inFast = tr.storedSubject(string(subject)), to, m, true
	p.fastAnswer = answer
	p.buf = append(p.buf[:0], msg...)
	sm := jetlog.Msg{Subject: p.subject, Data: p.buf}
	var expect jetlog.Expect
	var refused *apiError // the message's own refusal, reported in its turn
	var tooHigh bool      // its Nats-Required-Api-Level
	if hdr >= 0 {
		sm.Header, sm.Data = p.buf[:hdr:hdr], p.buf[hdr:]
		if header.Value(sm.Header, hdrRequiredAPI) != nil {
			tooHigh = levelTooHigh(sm.Header)
			sm = stageCopy(sm) // without the header, never stored
		}
		expect, refused = st.fastHeaders(&sm)
	}
	if st.counter.Load() && refused == nil {
		refused = errFastUnsupported("Nats-Incr")
	}
	store, drain := st.admitFast(p, tooHigh, refused, false)
	if drain {
		// The batch's earlier messages are still in the appender: once
		// they are stored (and counted), this one is judged as the
		// reference judges it, one message after the other.
		_ = st.log.Sync() // a failed sync fails the next appends, which say so
		store, _ = st.admitFast(p, tooHigh, refused, true)
	}
	if !store {
		p.reply, p.fastAnswer, p.inFast, p.msg = "", "", false, jetlog.Msg{}
		st.pubs.Put(p)
		return
	}
	p.start = time.Now() // real time: the latency is about I/O, not message time
	p.msg = sm
	expect.Group = p.fastGroup
	st.log.AppendAsync(sm, expect, p.done)
}

// fastHeaders checks what a fast batch message's headers ask for: the
// preconditions and TTLs a plain publish may carry. Rollups, schedules,
// counters and atomic batch headers are not served in a fast batch.
func (st *stream) fastHeaders(m *jetlog.Msg) (jetlog.Expect, *apiError) {
	expects, rollup, ttl, other := publishHeaders(m.Header)
	var ex jetlog.Expect
	switch {
	case other:
		return ex, errFastUnsupported("Nats-Batch-Id, Nats-Incr or Nats-Schedule")
	case rollup && header.Value(m.Header, "Nats-Rollup") != nil:
		return ex, errFastUnsupported("Nats-Rollup")
	}
	var e *apiError
	if expects {
		if ex, e = st.expectations(m.Header); e != nil {
			return ex, e
		}
	}
	if ttl {
		m.Header, e = st.checkTTL(m.Header)
	}
	return ex, e
}

// errFastUnsupported refuses, in a fast batch, a header bus serves only
// on plain publishes (docs/api.md).
func errFastUnsupported(header string) *apiError {
	return newAPIError(400, 10177, "batch publish unsupported header used: %s", header)
}

// admitFast runs message p.fast through its batch, in the reference's
// order: the batch is found or opened, the API level checked, a ping
// answered, a gap or the commit handled, the first message acked, and
// the message's own refusal reported. It reports whether to store the
// message. Errors before the batch is found go to the publisher as a
// plain publish's (not on a no_ack stream); everything after to the
// reply, as the reference's. A message that ends the batch or answers
// with where it stands (a ping, an end of batch, a gap, a refusal) is
// not judged while earlier ones are in the appender, unless drained:
// drain asks the caller to wait for them and call again.
func (st *stream) admitFast(p *pub, levelTooHigh bool, refused *apiError, drained bool) (store, drain bool) {
	m, reply, answer := p.fast, p.reply, p.fastAnswer
	var o fastOutcome
	defer st.deliverFast(&o)
	fs := &st.fast
	fs.mu.Lock()
	defer fs.mu.Unlock()
	b, e := st.openFastLocked(m)
	if e == nil && !drained && b.pending > 0 &&
		(m.op == fastPing || m.op == fastCommitEOB || m.seq != b.lseq+1 || refused != nil || levelTooHigh) {
		return false, true
	}
	if e == nil && levelTooHigh {
		st.dropFastLocked(m.id)
		e = errRequiredAPILevel()
	}
	if e != nil {
		st.publishes.refused.Add(1)
		o.send(answer, st.ackErrorBody(e))
		return false, false
	}
	if !b.commit {
		b.deadline = st.sh.now().Add(st.sh.batchLimits.Timeout)
		fs.expiry.armLocked(st.sh.now(), b.deadline, st.expireFast)
	}
	if m.op == fastPing {
		sendFlow := true
		if m.seq > b.lseq {
			o.send(reply, flowGap(b.lseq+1, m.seq+1))
			if b.gapOK {
				b.lseq = m.seq
				if b.pending == 0 {
					b.pseq = b.lseq
				}
				sendFlow = !st.flowLocked(b, reply, &o)
			} else {
				if b.pending == 0 {
					b.pseq = b.lseq
				}
				sendFlow = !st.commitFastLocked(b, m.id, reply, &o)
			}
		}
		if sendFlow {
			o.send(reply, flowAck(b.fseq, b.ackMsgs))
		}
		return false, false
	}
	if b.commit {
		return false, false // ending already: the publisher waits for the pub ack
	}
	b.lseq++
	if b.lseq != m.seq {
		o.send(reply, flowGap(b.lseq, m.seq))
		if !b.gapOK || m.seq < b.lseq {
			b.lseq--
			if b.pending == 0 { // stored is all there will be (the reference would wait on)
				b.pseq = b.lseq
			}
			st.commitFastLocked(b, m.id, reply, &o)
			return false, false
		}
		b.lseq = m.seq
	}
	commit := m.op == fastCommit || m.op == fastCommitEOB
	if commit {
		if m.op == fastCommitEOB {
			b.lseq--
			if b.pending == 0 {
				b.pseq = b.lseq
			}
		}
		st.commitFastLocked(b, m.id, reply, &o)
		if m.op == fastCommitEOB {
			return false, false
		}
	}
	if m.seq == 1 && answer != "" && !commit {
		o.send(reply, flowAck(0, b.ackMsgs))
	}
	if refused != nil {
		st.publishes.refused.Add(1)
		st.failFastLocked(b, m, reply, refused, &o)
		return false, false
	}
	b.pending++
	p.fastGroup = b.group
	return true, false
}

// ackErrorBody is a publish's error answer.
func (st *stream) ackErrorBody(e *apiError) []byte {
	b, _ := json.Marshal(pubAck{Error: e, Stream: st.name, Domain: st.sh.domain}) // plain fields cannot fail
	return b
}

// fastStored is a fast batch message's completion: it counts it as
// stored, or reports why the store refused it; a duplicate (its
// Nats-Msg-Id seen) is counted as received but not stored.
func (st *stream) fastStored(p *pub, ack jetlog.PubAck, err error) {
	m, reply := p.fast, p.reply
	var o fastOutcome
	defer st.deliverFast(&o)
	fs := &st.fast
	fs.mu.Lock()
	defer fs.mu.Unlock()
	b := fs.open[m.id]
	if errors.Is(err, jetlog.ErrGroupFailed) {
		// Queued behind a refused message: the batch ended there, and
		// the reference, taking one message after the other, would
		// have found it gone.
		if b != nil && b.group == p.fastGroup {
			b.pending = max(b.pending-1, 0)
		}
		o.send(p.fastAnswer, st.ackErrorBody(errFastUnknown()))
		return
	}
	if b == nil {
		return // forgotten meanwhile (timed out, or the stream changed)
	}
	b.pending = max(b.pending-1, 0)
	switch {
	case err != nil:
		st.failFastLocked(b, m, reply, storeError(err), &o)
		return
	case ack.Duplicate:
		if b.pending == 0 {
			b.pseq = m.seq
			st.flowLocked(b, reply, &o)
		}
		if m.op != fastCommit {
			return
		}
		if !b.gapOK && b.lseq == 1 {
			st.dropFastLocked(m.id)
			body := appendPubAck(nil, st.name, st.sh.domain, jetlog.PubAck{Seq: ack.Seq})
			body = append(body[:len(body)-1], `,"duplicate": true,"batch":`...) // the reference's spacing
			body = strconv.AppendQuote(body, m.id)
			body = append(append(body, `,"count":`...), strconv.FormatUint(m.seq, 10)...)
			o.send(reply, append(body, '}'))
			return
		}
		st.commitFastLocked(b, m.id, reply, &o)
		return
	}
	b.sseq = ack.Seq
	if b.pending == 0 {
		b.pseq = b.lseq
	} else {
		b.pseq = m.seq
	}
	if b.lseq == b.pseq && b.commit {
		st.dropFastLocked(m.id)
		o.send(reply, st.fastPubAck(m.id, b.sseq, b.lseq))
		return
	}
	st.flowLocked(b, reply, &o)
}
