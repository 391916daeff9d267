package jetstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nuid"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// Atomic batch publish (allow_atomic), as nats-server 2.12 added it: a
// client publishes the messages of a batch with Nats-Batch-Id and
// Nats-Batch-Sequence (1, 2, ...), the last one also with
// Nats-Batch-Commit ("1", or "eob": the commit message itself is not
// stored). The stream stages them, not stored and not visible, each
// acknowledged with an empty reply; the commit checks the whole batch
// and stores it with one atomic commit (jetlog.AppendAtomic: all or
// nothing, also across a crash), and only the commit gets a pub ack,
// with "batch" and "count". A gap, a timeout or any refusal abandons the
// batch: nothing of it is stored.
//
// Staged messages live in memory only: a restart drops every open batch
// (the client never got the commit's ack, so it publishes it again).

// Header names, as the reference spells them.
const (
	hdrBatchID     = "Nats-Batch-Id"
	hdrBatchSeq    = "Nats-Batch-Sequence"
	hdrBatchCommit = "Nats-Batch-Commit"
	hdrRequiredAPI = "Nats-Required-Api-Level"
)

// maxBatchID is the longest batch id the reference takes.
const maxBatchID = 64

// batches is a stream's open atomic batches. One timer, armed for the
// earliest deadline, abandons those that went quiet.
type batches struct {
	mu     sync.Mutex // guards the fields below
	open   map[string]*stagedBatch
	expiry deadlineTimer
	// staged is the bytes of the open batches' messages, and of the
	// batches being committed until their commit is done.
	staged int64
}

// stagedBatch is one open batch: its messages so far (copies, subjects
// already transformed), their bytes (see stagedSize) and when it is
// abandoned.
type stagedBatch struct {
	msgs     []jetlog.Msg
	bytes    int64
	deadline time.Time
}

func errBatchIncomplete() *apiError {
	return newAPIError(400, 10176, "atomic publish batch is incomplete")
}

func errBatchTooManyInflight() *apiError {
	return newAPIError(429, 10210, "atomic publish too many inflight")
}

// errBatchTooLarge is the reference's refusal of a batch of more than
// max messages; bus also gives it, with a bound in bytes, to a batch
// that would stage more than it may (reserveStagedLocked).
func errBatchTooLarge(max int64) *apiError {
	return newAPIError(400, 10199, "atomic publish batch is too large: %d", max)
}

// batchCommit reads Nats-Batch-Commit: whether the message commits,
// whether it is an end-of-batch marker, whether the value is valid.
func batchCommit(hdr []byte) (commit, eob, valid bool) {
	v := header.Value(hdr, hdrBatchCommit)
	if v == nil {
		return false, false, true
	}
	eob = string(v) == "eob"
	return true, eob, eob || string(v) == "1"
}

// batchMsg is what publishBatchMsg read off a batch message's headers.
type batchMsg struct {
	seq  uint64 // Nats-Batch-Sequence
	size uint64 // of the batch with this message; an end-of-batch marker is not one of it
	// commit, eob, valid: see batchCommit.
	commit, eob, valid bool
}

// publishBatchMsg handles one message of an atomic batch on the
// publisher's reader goroutine; the commit waits for the disk there. It
// owns p.
func (st *stream) publishBatchMsg(p *pub, m jetlog.Msg, id string) {
	defer func() {
		p.reply, p.msg = "", jetlog.Msg{} // a pooled pub must not pin a staged message
		st.pubs.Put(p)
	}()
	cfg := st.config()
	reply := p.reply
	switch {
	case cfg.MaxMsgSize >= 0 && len(m.Header)+len(m.Data) > int(cfg.MaxMsgSize):
		st.ackError(reply, errMsgTooLarge())
		return
	case !cfg.AllowAtomic:
		st.ackError(reply, newAPIError(400, 10174, "atomic publish is disabled"))
		return
	case len(id) > maxBatchID:
		st.ackError(reply, newAPIError(400, 10179, "atomic publish batch ID is invalid"))
		return
	}
	seq, ok := parseBatchSeq(header.Value(m.Header, hdrBatchSeq))
	if !ok {
		st.ackError(reply, newAPIError(400, 10175, "atomic publish sequence is missing"))
		return
	}
	bm := batchMsg{seq: seq, size: seq}
	bm.commit, bm.eob, bm.valid = batchCommit(m.Header)
	if bm.eob {
		bm.size--
	}
	r := st.stageBatchMsg(m, id, bm, cfg.MaxBytes)
	switch {
	case r.err != nil:
		if r.reason != "" {
			st.adviseBatchAbandoned(id, r.reason)
		}
		st.ackError(reply, r.err)
	case !bm.commit:
		if reply != "" { // staged: an empty reply, as the reference sends
			st.sh.core.Publish(reply, "", nil, nil)
		}
	default:
		defer st.releaseStaged(r.bytes)
		msgs := r.msgs
		if bm.eob { // the last stored message says it committed
			last := &msgs[len(msgs)-1]
			last.Header = withHeader(last.Header, hdrBatchCommit, "1")
		}
		st.commitBatch(p, id, msgs, cfg)
	}
}

// staging is what stageBatchMsg did with a message, for publishBatchMsg
// to answer once bs.mu is released.
type staging struct {
	err    *apiError // refused; an open batch is abandoned with it
	reason string    // the abandoned batch's advisory reason; "" sends none
	// msgs is the whole batch when the message committed it, and bytes
	// what it staged, counted until releaseStaged.
	msgs  []jetlog.Msg
	bytes int64
}

// stageBatchMsg checks message bm of batch id against the open batch, in
// the reference's order, and stages it, or takes the batch out to be
// committed. maxBytes is the stream's max_bytes (<= 0: none).
func (st *stream) stageBatchMsg(m jetlog.Msg, id string, bm batchMsg, maxBytes int64) staging {
	lim := st.sh.batchLimits
	bs := &st.batches
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.open[id]
	if b == nil {
		switch {
		case bm.seq != 1 && bm.size > uint64(lim.MaxSize):
			return staging{err: errBatchTooLarge(int64(lim.MaxSize))}
		case bm.seq != 1:
			return staging{err: errBatchIncomplete()}
		case len(bs.open) >= lim.MaxInflightPerStream:
			return staging{err: errBatchTooManyInflight()}
		case st.sh.inflightBatches.Add(1) > int64(lim.MaxInflightTotal):
			st.sh.inflightBatches.Add(-1)
			return staging{err: errBatchTooManyInflight()}
		}
		b = &stagedBatch{}
		if bs.open == nil {
			bs.open = map[string]*stagedBatch{}
		}
		bs.open[id] = b
	}
	if !bm.valid {
		return st.abandonLocked(id, newAPIError(400, 10200, "atomic publish batch commit is invalid"), "")
	}
	if levelTooHigh(m.Header) {
		return st.abandonLocked(id, errRequiredAPILevel(), "unsupported")
	}
	if bm.seq != uint64(len(b.msgs))+1 || bm.seq == 1 && bm.eob {
		return st.abandonLocked(id, errBatchIncomplete(), "incomplete")
	}
	if bm.size > uint64(lim.MaxSize) {
		return st.abandonLocked(id, errBatchTooLarge(int64(lim.MaxSize)), "large")
	}
	if !bm.eob {
		if e, reason := st.reserveStagedLocked(b, stagedSize(m), maxBytes); e != nil {
			if bm.seq == 1 { // it never opened: no advisory, as for too many inflight
				reason = ""
			}
			return st.abandonLocked(id, e, reason)
		}
		b.msgs = append(b.msgs, stageCopy(m))
	}
	if !bm.commit {
		b.deadline = st.sh.now().Add(lim.Timeout)
		bs.expiry.armLocked(st.sh.now(), b.deadline, st.expireBatches)
		return staging{}
	}
	st.forgetBatchLocked(id)
	return staging{msgs: b.msgs, bytes: b.bytes}
}

// abandonLocked drops batch id and refuses its message with e (bs.mu
// held).
func (st *stream) abandonLocked(id string, e *apiError, reason string) staging {
	st.dropBatchLocked(id)
	return staging{err: e, reason: reason}
}

// parseBatchSeq reads Nats-Batch-Sequence: decimal digits only.
func parseBatchSeq(v []byte) (uint64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil && v[0] != '+'
}

// stageCopy copies a message off the pooled publish buffer, without the
// Nats-Required-Api-Level header (checked already, never stored).
func stageCopy(m jetlog.Msg) jetlog.Msg {
	hdr := m.Header
	if header.Value(hdr, hdrRequiredAPI) != nil {
		hdr = withoutHeaders(hdr, func(k []byte) bool { return bytes.EqualFold(k, []byte(hdrRequiredAPI)) })
	}
	buf := make([]byte, 0, len(hdr)+len(m.Data))
	buf = append(append(buf, hdr...), m.Data...)
	return jetlog.Msg{Subject: m.Subject, Header: buf[:len(hdr):len(hdr)], Data: buf[len(hdr):]}
}

// forgetBatchLocked takes batch id out of the open ones (bs.mu held);
// its staged bytes stay counted (see dropBatchLocked).
func (st *stream) forgetBatchLocked(id string) *stagedBatch {
	b, ok := st.batches.open[id]
	if ok {
		delete(st.batches.open, id)
		st.sh.inflightBatches.Add(-1)
	}
	return b
}

// dropBatchLocked abandons an open batch (bs.mu held): it is forgotten,
// its staged bytes are given back, and nothing holds its messages any
// more.
func (st *stream) dropBatchLocked(id string) {
	if b := st.forgetBatchLocked(id); b != nil {
		st.releaseStagedLocked(b.bytes)
		b.msgs, b.bytes = nil, 0
	}
}

// dropBatches abandons every open batch, without advisories: the stream
// closes or stops allowing atomic publish.
func (st *stream) dropBatches() {
	bs := &st.batches
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for id := range bs.open {
		st.dropBatchLocked(id)
	}
	bs.expiry.stopLocked()
}

// expireBatches abandons the batches whose deadline passed, on the
// timer's goroutine.
func (st *stream) expireBatches() {
	bs := &st.batches
	now := st.sh.now()
	var gone []string
	bs.mu.Lock()
	bs.expiry.armed = false
	var next time.Time
	for id, b := range bs.open {
		if !b.deadline.After(now) {
			gone = append(gone, id)
			st.dropBatchLocked(id)
		} else if next.IsZero() || b.deadline.Before(next) {
			next = b.deadline
		}
	}
	if !next.IsZero() {
		bs.expiry.armLocked(now, next, st.expireBatches)
	}
	bs.mu.Unlock()
	for _, id := range gone {
		st.adviseBatchAbandoned(id, "timeout")
	}
}

// openBatches is how many batches the stream has open (for tests and
// monitoring).
func (st *stream) openBatches() int {
	st.batches.mu.Lock()
	defer st.batches.mu.Unlock()
	return len(st.batches.open)
}

type batchAbandonedAdvisory struct {
	Type   string    `json:"type"`
	ID     string    `json:"id"`
	Time   time.Time `json:"timestamp"`
	Stream string    `json:"stream"`
	Domain string    `json:"domain,omitempty"`
	Batch  string    `json:"batch"`
	Reason string    `json:"reason"` // timeout, incomplete, large, unsupported
}

// adviseBatchAbandoned publishes the reference's
// $JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.<stream>.
func (st *stream) adviseBatchAbandoned(id, reason string) {
	b, _ := json.Marshal(batchAbandonedAdvisory{ // plain fields cannot fail
		Type: "io.nats.jetstream.advisory.v1.stream_batch_abandoned", ID: nuid.Next(), Time: st.sh.now().UTC(),
		Stream: st.name, Domain: st.sh.domain, Batch: id, Reason: reason,
	})
	st.sh.core.Publish("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED."+st.name, "", nil, b)
}

// publishSpecial takes a publish to a stream that is not a counter
// stream if it carries Nats-Batch-Id (an atomic batch) or Nats-Incr (an
// increment, refused there); it reports whether it took p.
func (st *stream) publishSpecial(p *pub, m jetlog.Msg) bool {
	if id := header.Value(m.Header, hdrBatchID); len(id) > 0 {
		st.publishBatchMsg(p, m, string(id))
		return true
	}
	if header.Value(m.Header, hdrIncr) == nil {
		return false
	}
	if _, e := checkIncr(m.Header, m.Data, false); e != nil {
		st.ackError(p.reply, e)
		st.pubs.Put(p)
		return true
	}
	return false
}
