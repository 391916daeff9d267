package jetstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// Dead-letter redrive, bus's own API (docs/api.md): move dead letters from
// a dead-letter stream back to the subjects they came from, as SQS's
// StartMessageMoveTask does, at a bounded rate. One request handles one
// batch (at most redriveMaxBatch messages) and says where to continue,
// so a redrive of any size is a loop of short requests, and a server
// restart loses nothing but the batch in flight (whose messages are
// either still in the DLQ or redriven once: each carries its own
// Nats-Msg-Id).
const (
	redrivePrefix      = "$BUS.API.DLQ.REDRIVE."
	redriveAckPrefix   = "$BUS.DLQ.REDRIVEACK."
	typeRedrive        = "io.bus.api.v1.dlq_redrive_response"
	redriveMaxBatch    = 10_000
	redriveDefaultMax  = 1_000
	redriveDefaultRate = 1_000 // messages per second
	redriveMaxRate     = 100_000
	redriveAckWait     = 5 * time.Second
	redriveConcurrent  = 2 // redrives at once; more get 503
	hdrRedriveCount    = "Bus-Redrive-Count"
	hdrOriginMsgID     = "Bus-Origin-Msg-Id"
)

// redriveRequest selects the dead letters to move. With none of seq,
// from_seq and to_seq, the whole stream is a candidate.
type redriveRequest struct {
	Seq          uint64 `json:"seq,omitempty"`
	FromSeq      uint64 `json:"from_seq,omitempty"`
	ToSeq        uint64 `json:"to_seq,omitempty"`
	Filter       string `json:"filter,omitempty"`        // subjects of the dead-letter stream
	OriginStream string `json:"origin_stream,omitempty"` // Bus-Dlq-Stream
	Consumer     string `json:"consumer,omitempty"`      // Bus-Dlq-Consumer
	Max          int    `json:"max,omitempty"`           // messages in this batch
	Rate         int    `json:"rate,omitempty"`          // messages per second
	Keep         bool   `json:"keep,omitempty"`          // leave the dead letters in place
}

type redriveFailure struct {
	Seq    uint64 `json:"seq"`
	Reason string `json:"reason"`
}

type redriveResponse struct {
	Type     string           `json:"type"`
	Error    *apiError        `json:"error,omitempty"`
	Redriven int              `json:"redriven"`
	Skipped  int              `json:"skipped"` // not dead letters, or not selected
	Kept     int              `json:"kept"`    // redriven but left in the DLQ (keep, deny_delete)
	Failed   []redriveFailure `json:"failed,omitempty"`
	// NextSeq is where the next batch starts; 0 when nothing is left.
	NextSeq uint64 `json:"next_seq"`
}

// redrives counts the redrives running, against redriveConcurrent, and
// numbers them (each gets its own ack inbox).
type redrives struct {
	running atomic.Int32
	ids     atomic.Uint64
}

// captureRedrive takes a redrive request off a reader goroutine; the
// redrive runs on its own goroutine, since it waits for acks and paces
// itself, and would otherwise hold an API lane.
func (svc *Service) captureRedrive(from Rights, subject, reply []byte, hdr int, msg []byte) bool {
	body := msg
	if hdr >= 0 {
		body = msg[hdr:]
	}
	name, replyTo := strings.TrimPrefix(string(subject), redrivePrefix), string(reply)
	if svc.redrives.running.Add(1) > redriveConcurrent {
		svc.redrives.running.Add(-1)
		svc.replyTo(replyTo, typeRedrive).send(redriveResponse{Type: typeRedrive, Error: errInsufficientResources()}, nil)
		return true
	}
	body = bytes.Clone(body)
	svc.workers.Add(1)
	go func() {
		defer svc.workers.Done()
		defer svc.redrives.running.Add(-1)
		svc.replyTo(replyTo, typeRedrive).send(svc.redrive(from, name, body), nil)
	}()
	return true
}

func (svc *Service) redrive(from Rights, name string, body []byte) redriveResponse {
	resp := redriveResponse{Type: typeRedrive}
	var req redriveRequest
	if e := decodeBody(body, &req); e != nil {
		resp.Error = e
		return resp
	}
	if e := req.normalize(); e != nil {
		resp.Error = e
		return resp
	}
	st, e := svc.lookup(name)
	if e != nil {
		resp.Error = e
		return resp
	}
	// Everything the stream may hold, sources and mirrors included: a
	// dead-letter stream fed only by sources has no subjects of its own.
	readable := svc.sh.heldSubjects(st.config(), maxHeldDepth)
	if req.Filter != "" {
		readable = []string{req.Filter}
	}
	for _, f := range readable {
		if !svc.mayRead(from, f) {
			resp.Error = errMayNotRead(from, f)
			return resp
		}
	}
	r, err := svc.newRedriver(st)
	if err != nil {
		resp.Error = errStreamGeneric(err)
		return resp
	}
	defer svc.sh.core.Unsubscribe(r.sub)
	interval := time.Second / time.Duration(req.Rate)
	start := time.Now()
	filters := []string(nil)
	if req.Filter != "" {
		filters = []string{req.Filter}
	}
	seq, moved := req.FromSeq, 0
	for seq != 0 && moved < req.Max {
		msgs, err := st.log.NextBatch(seq, filters, min(req.Max-moved, 64))
		if err != nil || len(msgs) == 0 {
			seq = 0 // nothing left (a read error ends the batch; the next one retries)
			break
		}
		for _, m := range msgs {
			if m.Seq > req.ToSeq {
				seq = 0
				break
			}
			if moved == req.Max {
				break
			}
			seq = m.Seq + 1
			origin, ok := req.selects(m)
			if !ok {
				resp.Skipped++
				continue
			}
			if from != nil && !from.MayPublish(origin) {
				resp.Failed = append(resp.Failed, redriveFailure{m.Seq, "permission denied to publish to " + origin})
				continue
			}
			// Paced from the start, so a slow ack does not add up.
			if wait := time.Until(start.Add(time.Duration(moved) * interval)); wait > 0 {
				select {
				case <-time.After(wait):
				case <-svc.stop:
					resp.NextSeq = m.Seq
					return resp
				}
			}
			moved++
			if why := r.move(st.name, m, origin); why != "" {
				resp.Failed = append(resp.Failed, redriveFailure{m.Seq, why})
				continue
			}
			resp.Redriven++
			if req.Keep || st.config().DenyDelete {
				resp.Kept++
				continue
			}
			if err := st.log.Delete(m.Seq); err != nil {
				resp.Failed = append(resp.Failed, redriveFailure{m.Seq, "redriven, but not removed from the dead-letter stream: " + publicError(err)})
			}
		}
		if seq > req.ToSeq {
			seq = 0
		}
	}
	if seq > st.log.State().LastSeq {
		seq = 0
	}
	resp.NextSeq = seq
	return resp
}

// normalize fills in the defaults and bounds of a redrive request.
func (r *redriveRequest) normalize() *apiError {
	if r.Seq > 0 {
		if r.FromSeq > 0 || r.ToSeq > 0 {
			return newAPIError(400, 10003, "seq and from_seq/to_seq are exclusive")
		}
		r.FromSeq, r.ToSeq = r.Seq, r.Seq
	}
	r.FromSeq = max(r.FromSeq, 1)
	if r.ToSeq == 0 {
		r.ToSeq = ^uint64(0)
	}
	if r.ToSeq < r.FromSeq {
		return newAPIError(400, 10003, "to_seq is before from_seq")
	}
	if r.Filter != "" && !subjects.ValidSubject(r.Filter) {
		return newAPIError(400, 10003, "invalid filter %q", r.Filter)
	}
	switch {
	case r.Max < 0 || r.Max > redriveMaxBatch:
		return newAPIError(400, 10003, "max must be between 1 and %d", redriveMaxBatch)
	case r.Max == 0:
		r.Max = redriveDefaultMax
	}
	switch {
	case r.Rate < 0 || r.Rate > redriveMaxRate:
		return newAPIError(400, 10003, "rate must be between 1 and %d messages a second", redriveMaxRate)
	case r.Rate == 0:
		r.Rate = redriveDefaultRate
	}
	return nil
}

// selects reports whether m is a dead letter the request asks for, and
// the subject it goes back to.
func (r *redriveRequest) selects(m jetlog.Msg) (string, bool) {
	origin, ok := headerValue(m.Header, hdrDLQSubject)
	if !ok || !subjects.ValidLiteral(origin) {
		return "", false
	}
	if r.OriginStream != "" {
		if s, _ := headerValue(m.Header, hdrDLQStream); s != r.OriginStream {
			return "", false
		}
	}
	if r.Consumer != "" {
		if c, _ := headerValue(m.Header, hdrDLQConsumer); c != r.Consumer {
			return "", false
		}
	}
	return origin, true
}

// redriver publishes dead letters back and waits for each one's pub ack.
type redriver struct {
	svc   *Service
	inbox string
	sub   Subscription
	acks  chan redriveAck
	n     int
}

// redriveAck is the pub ack of the n-th message a redriver published.
type redriveAck struct {
	n    int
	body []byte
}

func (svc *Service) newRedriver(st *stream) (*redriver, error) {
	r := &redriver{svc: svc, acks: make(chan redriveAck, 1)}
	r.inbox = redriveAckPrefix + st.name + "." + strconv.FormatUint(svc.redrives.ids.Add(1), 10)
	sub, err := svc.sh.core.Subscribe(r.inbox+".*", func(subject, _ []byte, hdr int, msg []byte) bool {
		if hdr >= 0 {
			msg = msg[hdr:]
		}
		n, _ := strconv.Atoi(string(subject[bytes.LastIndexByte(subject, '.')+1:]))
		select {
		case r.acks <- redriveAck{n, bytes.Clone(msg)}:
		default: // a late ack of a message given up on
		}
		return true
	})
	r.sub = sub
	return r, err
}

// move publishes dead letter m of stream dlq back to origin and returns
// why it failed, or "".
func (r *redriver) move(dlq string, m jetlog.Msg, origin string) string {
	r.n++
	hdr := redrivenHeader(m.Header, dlq, m.Seq)
	if r.svc.sh.core.Publish(origin, r.inbox+"."+strconv.Itoa(r.n), hdr, m.Data) == 0 {
		return "nothing listens on " + origin
	}
	timeout := time.NewTimer(redriveAckWait)
	defer timeout.Stop()
	for {
		var ack redriveAck
		select {
		case ack = <-r.acks:
		case <-timeout.C:
			return "no stream stored it (no ack from " + origin + ")"
		case <-r.svc.stop:
			return "server shutting down"
		}
		if ack.n != r.n {
			continue // the late ack of a message given up on
		}
		var pa pubAck
		if err := json.Unmarshal(ack.body, &pa); err != nil {
			return "unreadable ack: " + err.Error()
		}
		if pa.Error != nil {
			return fmt.Sprintf("refused by stream %s: %s", pa.Stream, pa.Error.Description)
		}
		return ""
	}
}

// redrivenHeader is a dead letter's header block as it goes back: without
// the Bus-Dlq-* headers and the dead letter's own id, with a redrive count
// one higher, the original Nats-Msg-Id kept as Bus-Origin-Msg-Id, and an
// id of its own, so that redriving the same dead letter twice stores it
// once.
func redrivenHeader(hdr []byte, dlq string, seq uint64) []byte {
	count := 0
	if v, ok := headerValue(hdr, hdrRedriveCount); ok {
		count, _ = strconv.Atoi(v)
	}
	origID, hadOrig := headerValue(hdr, hdrOriginMsgID)
	if id, ok := headerValue(hdr, hdrDLQMsgID); ok && !hadOrig {
		origID, hadOrig = id, true
	}
	out := withoutHeaders(hdr, func(key []byte) bool {
		return len(key) >= 8 && bytes.EqualFold(key[:8], []byte("Bus-Dlq-")) ||
			bytes.EqualFold(key, []byte("Nats-Msg-Id")) ||
			bytes.EqualFold(key, []byte(hdrRedriveCount)) ||
			bytes.EqualFold(key, []byte(hdrOriginMsgID))
	})
	kv := []string{"Nats-Msg-Id", "redrive." + dlq + "." + strconv.FormatUint(seq, 10), hdrRedriveCount, strconv.Itoa(count + 1)}
	if hadOrig {
		kv = append(kv, hdrOriginMsgID, origID)
	}
	return withHeaders(out, kv...)
}
