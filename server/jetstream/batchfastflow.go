package jetstream

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// The flow of a fast batch (ADR-50), as the reference runs it on one
// server: how far the batch got (lseq), how far it is stored (pseq), the
// seq the last flow ack named (fseq), and how many messages sit in the
// appender (pending). Flow acks {"type":"ack","seq":n,"msgs":m} tell the
// publisher that everything up to n is stored and that the next comes
// after m more; a gap {"type":"gap"} or an error {"type":"err"} is
// reported as it happens; the commit (or end of batch, or the first
// failure in "fail" gap mode) is answered with a pub ack carrying
// "batch" and "count" once all it counts is stored.

// The reference's defaults for open fast batches, used when
// jetstream.limits.batch sets no max_inflight_per_stream or
// max_inflight_total (those bound both kinds of batch, each kind
// counted on its own, as in the reference).
const (
	defaultFastInflightPerStream = 1000
	defaultFastInflightTotal     = 50_000
	// maxFastAckMsgs is the most messages a flow ack lets the
	// publishers of one stream send between acks, shared among them.
	maxFastAckMsgs = 500
)

// fastBatches is a stream's open fast batches. One timer, armed for the
// earliest deadline, forgets those that went quiet.
type fastBatches struct {
	mu     sync.Mutex // guards the fields below
	open   map[string]*fastBatch
	expiry deadlineTimer
}

type fastBatch struct {
	lseq, pseq, fseq uint64
	sseq             uint64 // the stream seq of its last stored message
	pending          int    // messages in the appender
	ackMsgs          uint16 // flow acks every ackMsgs messages
	maxAckMsgs       uint16 // what the publisher asked for
	gapOK            bool
	commit           bool          // committing: takes no more messages
	group            *jetlog.Group // a "fail" batch's appends, nil for "ok"
	deadline         time.Time
}

// fastReply is one message a fast batch answers with, sent once
// fastBatches.mu is released.
type fastReply struct {
	to   string
	body []byte
}

// fastOutcome is what the locked steps decided to send.
type fastOutcome struct{ replies []fastReply }

func (o *fastOutcome) send(to string, body []byte) {
	if to != "" {
		o.replies = append(o.replies, fastReply{to, body})
	}
}

func (st *stream) deliverFast(o *fastOutcome) {
	for _, r := range o.replies {
		st.sh.core.Publish(r.to, "", nil, r.body)
	}
}

func flowAck(seq uint64, msgs uint16) []byte {
	b, _ := json.Marshal(struct {
		Type string `json:"type"`
		Seq  uint64 `json:"seq"`
		Msgs uint16 `json:"msgs"`
	}{"ack", seq, msgs})
	return b
}

func flowGap(expected, seq uint64) []byte {
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		LastSeq uint64 `json:"last_seq"`
		Seq     uint64 `json:"seq"`
	}{"gap", expected, seq})
	return b
}

func flowErr(seq uint64, e *apiError) []byte {
	b, _ := json.Marshal(struct {
		Type  string    `json:"type"`
		Seq   uint64    `json:"seq"`
		Error *apiError `json:"error"`
	}{"err", seq, e})
	return b
}

// fastPubAck is a fast batch's pub ack: its last stored stream seq and
// how many messages the batch counted.
func (st *stream) fastPubAck(id string, seq, count uint64) []byte {
	b := appendPubAck(nil, st.name, st.sh.domain, jetlog.PubAck{Seq: seq})
	b = append(b[:len(b)-1], `,"batch":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"count":`...)
	b = strconv.AppendUint(b, count, 10)
	return append(b, '}')
}

// openLocked finds batch m.id, or opens it for its first message.
func (st *stream) openFastLocked(m fastBatchMsg) (*fastBatch, *apiError) {
	fs := &st.fast
	if b := fs.open[m.id]; b != nil {
		return b, nil
	}
	lim := st.sh.fastLimits
	switch {
	case m.seq != 1 || m.op == fastPing:
		return nil, errFastUnknown()
	case len(fs.open)+1 > lim.MaxInflightPerStream:
		return nil, errFastTooManyInflight()
	case st.sh.inflightFast.Add(1) > int64(lim.MaxInflightTotal):
		st.sh.inflightFast.Add(-1)
		return nil, errFastTooManyInflight()
	}
	b := &fastBatch{gapOK: m.gapOK, maxAckMsgs: m.flow}
	if !m.gapOK {
		b.group = &jetlog.Group{}
	}
	if fs.open == nil {
		fs.open = map[string]*fastBatch{}
	}
	fs.open[m.id] = b
	b.ackMsgs = min(maxFastAckMsgs, b.maxAckMsgs)
	if len(fs.open) > 1 { // others publish too: this one ramps up
		b.ackMsgs = 1
	}
	return b, nil
}

func errFastUnknown() *apiError { return newAPIError(400, 10208, "batch publish ID unknown") }

func errFastTooManyInflight() *apiError {
	return newAPIError(429, 10211, "batch publish too many inflight")
}

// dropFastLocked forgets batch id.
func (st *stream) dropFastLocked(id string) {
	if _, ok := st.fast.open[id]; ok {
		delete(st.fast.open, id)
		st.sh.inflightFast.Add(-1)
	}
}

// commitFastLocked marks batch id committing; once all it counts is
// stored it answers with the pub ack and forgets the batch, and reports
// true.
func (st *stream) commitFastLocked(b *fastBatch, id, reply string, o *fastOutcome) bool {
	b.commit = true
	if b.lseq != b.pseq {
		return false // the pub ack waits for the last store
	}
	st.dropFastLocked(id)
	o.send(reply, st.fastPubAck(id, b.sseq, b.lseq))
	return true
}

// flowLocked sends a flow ack when the stored seq passed the last one by
// ackMsgs, moving ackMsgs towards the stream's share per publisher; it
// reports whether it sent one.
func (st *stream) flowLocked(b *fastBatch, reply string, o *fastOutcome) bool {
	am := uint64(b.ackMsgs)
	if b.pseq < b.fseq+am {
		return false
	}
	b.fseq += (b.pseq - b.fseq) / am * am
	share := uint16(max(1, maxFastAckMsgs/len(st.fast.open)))
	share = min(share, b.maxAckMsgs)
	switch {
	case b.ackMsgs < share:
		b.ackMsgs = uint16(min(int(b.ackMsgs)*2, int(share)))
	case b.ackMsgs > share:
		b.ackMsgs = max(b.ackMsgs/2, share)
	}
	o.send(reply, flowAck(b.fseq, b.ackMsgs))
	return true
}

// failFastLocked handles message m refused with e before or instead of
// being stored: the first message of a "fail" batch is answered as a
// plain publish; otherwise the error is reported and a "fail" batch (or
// an "ok" one at its commit) commits what it stored.
func (st *stream) failFastLocked(b *fastBatch, m fastBatchMsg, reply string, e *apiError, o *fastOutcome) {
	if !b.gapOK && m.seq == 1 {
		st.dropFastLocked(m.id)
		o.send(reply, st.ackErrorBody(e))
		return
	}
	o.send(reply, flowErr(m.seq, e))
	if b.gapOK && m.op != fastCommit {
		return
	}
	// What came after m (queued behind it, so refused as well) does
	// not count: the batch ends before m.
	b.lseq = m.seq - 1
	if b.pending == 0 {
		b.pseq = b.lseq
	}
	st.commitFastLocked(b, m.id, reply, o)
}

// deadlineTimer is one timer armed for the earliest of many deadlines;
// its owner's lock guards it.
type deadlineTimer struct {
	timer *time.Timer
	armed bool
}

// armLocked makes sure fire runs no later than at. Deadlines only move
// later, so an armed timer may fire early; fire re-arms for what is left.
func (t *deadlineTimer) armLocked(now, at time.Time, fire func()) {
	if t.armed {
		return
	}
	if t.timer == nil {
		t.timer = time.AfterFunc(at.Sub(now), fire)
	} else {
		t.timer.Reset(at.Sub(now))
	}
	t.armed = true
}

func (t *deadlineTimer) stopLocked() {
	if t.timer != nil {
		t.timer.Stop()
		t.armed = false
	}
}

// expireFast forgets the fast batches that went quiet for the batch
// timeout, on the timer's goroutine; a committing batch waits for its
// store instead. A later message of one is refused as of an unknown
// batch, as in the reference.
func (st *stream) expireFast() {
	fs := &st.fast
	now := st.sh.now()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.expiry.armed = false
	var next time.Time
	for id, b := range fs.open {
		switch {
		case b.commit:
		case !b.deadline.After(now):
			st.dropFastLocked(id)
		case next.IsZero() || b.deadline.Before(next):
			next = b.deadline
		}
	}
	if !next.IsZero() {
		fs.expiry.armLocked(now, next, st.expireFast)
	}
}

// dropFastBatches forgets every open fast batch: the stream closes or
// stops allowing them.
func (st *stream) dropFastBatches() {
	fs := &st.fast
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for id := range fs.open {
		st.dropFastLocked(id)
	}
	fs.expiry.stopLocked()
}

// openFastBatches is how many fast batches the stream has open (for
// tests and monitoring).
func (st *stream) openFastBatches() int {
	st.fast.mu.Lock()
	defer st.fast.mu.Unlock()
	return len(st.fast.open)
}
