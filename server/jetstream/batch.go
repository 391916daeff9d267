package jetstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nuid"

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

// BatchLimits bounds atomic batch publishing, as the reference's
// jetstream limits do (max_batch_inflight_per_stream,
// max_batch_inflight_total, max_batch_size, max_batch_timeout). A zero
// field means the reference's default.
type BatchLimits struct {
	MaxInflightPerStream int           // open batches per stream; 50
	MaxInflightTotal     int           // open batches in the server; 1000
	MaxSize              int           // messages per batch; 1000
	Timeout              time.Duration // since a batch's last message; 10s
}

func (b BatchLimits) withDefaults() BatchLimits {
	if b.MaxInflightPerStream <= 0 {
		b.MaxInflightPerStream = 50
	}
	if b.MaxInflightTotal <= 0 {
		b.MaxInflightTotal = 1000
	}
	if b.MaxSize <= 0 {
		b.MaxSize = 1000
	}
	if b.Timeout <= 0 {
		b.Timeout = 10 * time.Second
	}
	return b
}

// batches is a stream's open atomic batches. One timer, armed for the
// earliest deadline, abandons those that went quiet.
type batches struct {
	mu    sync.Mutex // guards the fields below
	open  map[string]*stagedBatch
	timer *time.Timer
	armed bool // timer is pending
}

// stagedBatch is one open batch: its messages so far (copies, subjects
// already transformed) and when it is abandoned.
type stagedBatch struct {
	msgs     []jetlog.Msg
	deadline time.Time
}

func errBatchIncomplete() *apiError {
	return newAPIError(400, 10176, "atomic publish batch is incomplete")
}

// batchCommit reads Nats-Batch-Commit: whether the message commits,
// whether it is an end-of-batch marker, whether the value is valid.
func batchCommit(hdr []byte) (commit, eob, valid bool) {
	v := jetlog.HeaderValue(hdr, hdrBatchCommit)
	if v == nil {
		return false, false, true
	}
	eob = string(v) == "eob"
	return true, eob, eob || string(v) == "1"
}

// publishBatchMsg handles one message of an atomic batch on the
// publisher's reader goroutine; the commit waits for the disk there. It
// owns p.
func (st *stream) publishBatchMsg(p *pub, m jetlog.Msg, id string) {
	defer st.pubs.Put(p)
	cfg := st.config()
	reply := p.reply
	lim := st.sh.batchLimits
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
	seq, ok := parseBatchSeq(jetlog.HeaderValue(m.Header, hdrBatchSeq))
	if !ok {
		st.ackError(reply, newAPIError(400, 10175, "atomic publish sequence is missing"))
		return
	}
	commit, eob, valid := batchCommit(m.Header)
	size := seq // the end-of-batch marker is not one of the batch
	if eob {
		size--
	}
	bs := &st.batches
	bs.mu.Lock()
	b := bs.open[id]
	if b == nil {
		switch {
		case seq != 1 && size > uint64(lim.MaxSize):
			bs.mu.Unlock()
			st.ackError(reply, errBatchTooLarge(lim.MaxSize))
			return
		case seq != 1:
			bs.mu.Unlock()
			st.ackError(reply, errBatchIncomplete())
			return
		case len(bs.open) >= lim.MaxInflightPerStream || st.sh.inflightBatches.Add(1) > int64(lim.MaxInflightTotal):
			if len(bs.open) < lim.MaxInflightPerStream {
				st.sh.inflightBatches.Add(-1)
			}
			bs.mu.Unlock()
			st.ackError(reply, newAPIError(429, 10210, "atomic publish too many inflight"))
			return
		}
		b = &stagedBatch{}
		if bs.open == nil {
			bs.open = map[string]*stagedBatch{}
		}
		bs.open[id] = b
	}
	abandon := func(e *apiError, reason string) {
		st.dropBatchLocked(id)
		bs.mu.Unlock()
		if reason != "" {
			st.adviseBatchAbandoned(id, reason)
		}
		st.ackError(reply, e)
	}
	if !valid {
		abandon(newAPIError(400, 10200, "atomic publish batch commit is invalid"), "")
		return
	}
	if v := jetlog.HeaderValue(m.Header, hdrRequiredAPI); len(v) > 0 {
		if n, err := strconv.Atoi(string(v)); err != nil || n > APILevel {
			abandon(newAPIError(412, 10185, "JetStream minimum api level required"), "unsupported")
			return
		}
	}
	if seq != uint64(len(b.msgs))+1 || seq == 1 && eob {
		abandon(errBatchIncomplete(), "incomplete")
		return
	}
	if size > uint64(lim.MaxSize) {
		abandon(errBatchTooLarge(lim.MaxSize), "large")
		return
	}
	if !eob {
		b.msgs = append(b.msgs, stageCopy(m))
	}
	if !commit {
		b.deadline = st.sh.now().Add(lim.Timeout)
		bs.armLocked(st, b.deadline)
		bs.mu.Unlock()
		if reply != "" { // staged: an empty reply, as the reference sends
			st.sh.core.Publish(reply, "", nil, nil)
		}
		return
	}
	msgs := b.msgs
	st.dropBatchLocked(id)
	bs.mu.Unlock()
	if eob { // the last stored message says it committed
		last := &msgs[len(msgs)-1]
		last.Header = withHeader(last.Header, hdrBatchCommit, "1")
	}
	st.commitBatch(p, id, msgs, cfg)
}

func errBatchTooLarge(max int) *apiError {
	return newAPIError(400, 10199, "atomic publish batch is too large: %d", max)
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
	if jetlog.HeaderValue(hdr, hdrRequiredAPI) != nil {
		hdr = withoutHeaders(hdr, func(k []byte) bool { return bytes.EqualFold(k, []byte(hdrRequiredAPI)) })
	}
	buf := make([]byte, 0, len(hdr)+len(m.Data))
	buf = append(append(buf, hdr...), m.Data...)
	return jetlog.Msg{Subject: m.Subject, Header: buf[:len(hdr):len(hdr)], Data: buf[len(hdr):]}
}

// dropBatchLocked forgets an open batch (bs.mu held).
func (st *stream) dropBatchLocked(id string) {
	if _, ok := st.batches.open[id]; ok {
		delete(st.batches.open, id)
		st.sh.inflightBatches.Add(-1)
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
	if bs.timer != nil {
		bs.timer.Stop()
		bs.armed = false
	}
}

// armLocked makes sure the timer fires no later than at (bs.mu held). A
// batch's deadline only moves later, so the timer, once armed, may fire
// early; expire then re-arms it for what is left.
func (bs *batches) armLocked(st *stream, at time.Time) {
	if bs.armed {
		return
	}
	d := at.Sub(st.sh.now())
	if bs.timer == nil {
		bs.timer = time.AfterFunc(d, st.expireBatches)
	} else {
		bs.timer.Reset(d)
	}
	bs.armed = true
}

// expireBatches abandons the batches whose deadline passed, on the
// timer's goroutine.
func (st *stream) expireBatches() {
	bs := &st.batches
	now := st.sh.now()
	var gone []string
	bs.mu.Lock()
	bs.armed = false
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
		bs.armLocked(st, next)
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
	if id := jetlog.HeaderValue(m.Header, hdrBatchID); len(id) > 0 {
		st.publishBatchMsg(p, m, string(id))
		return true
	}
	if jetlog.HeaderValue(m.Header, hdrIncr) == nil {
		return false
	}
	if _, e := checkIncr(m.Header, m.Data, false); e != nil {
		st.ackError(p.reply, e)
		st.pubs.Put(p)
		return true
	}
	return false
}
