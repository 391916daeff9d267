package jetstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Direct gets ($JS.API.DIRECT.GET.<stream>[.<subject>]) answer with the
// message itself and status headers, not JSON, and only for a stream
// with allow_direct: for any other the request is declined on the
// publisher's reader, so the client gets no responders, as from the
// reference, which subscribes only for such streams. A request for one
// message gets it or a status; a batch or multi_last request gets its
// messages and then a 204 EOB status (apidirectbatch.go).

// directGetRequest is the reference's JSApiMsgGetRequest as a direct get
// reads it (ADR-31).
type directGetRequest struct {
	Seq        uint64     `json:"seq,omitempty"`
	LastBySubj string     `json:"last_by_subj,omitempty"`
	NextBySubj string     `json:"next_by_subj,omitempty"`
	Batch      int        `json:"batch,omitempty"`
	MaxBytes   int        `json:"max_bytes,omitempty"`
	StartTime  *time.Time `json:"start_time,omitempty"`
	MultiLast  []string   `json:"multi_last,omitempty"`
	UpToSeq    uint64     `json:"up_to_seq,omitempty"`
	UpToTime   *time.Time `json:"up_to_time,omitempty"`
	NoHeaders  bool       `json:"no_hdr,omitempty"`
}

// The statuses a direct get answers with instead of a message.
const (
	statusEmptyRequest     = "408 Empty Request"
	statusMalformedRequest = "408 Malformed Request"
	statusBadRequest       = "408 Bad Request"
	statusNotFound         = "404 Message Not Found"
	statusNoResults        = "404 No Results"
	statusTooManyResults   = "413 Too Many Results"
	statusRequiredAPILevel = "412 Required Api Level"
	statusNoPermission     = "403 Permissions Violation"
)

// directGet answers a direct get: lastFor is the subject named in the
// request subject ($JS.API.DIRECT.GET.<stream>.<subject>), hasLastFor
// whether there is that part at all.
func (svc *Service) directGet(r apiRequest, name, lastFor string, hasLastFor bool) {
	st := svc.stream(name)
	if st == nil || !st.config().AllowDirect || r.reply == "" {
		return // declined already (servesDirect); a race with a delete or update
	}
	d := directSend{svc: svc, st: st, reply: r.reply, from: r.from}
	req, status := decodeDirectGet(r, lastFor, hasLastFor)
	if status != "" {
		d.status(status)
		return
	}
	d.maxBytes = req.MaxBytes
	if d.maxBytes == 0 {
		d.maxBytes = svc.directMaxBytes
	}
	switch {
	case len(req.MultiLast) > 0:
		d.multiLast(req)
	case req.Batch != 0:
		d.batch(req)
	default:
		d.one(req)
	}
}

// decodeDirectGet reads a direct get, or says which status refuses it,
// as the reference's: a request that asks for nothing is empty, one that
// asks for two kinds of message (or a batch of last messages) is bad.
// The subject form takes only max_bytes and no_hdr from its body.
func decodeDirectGet(r apiRequest, lastFor string, hasLastFor bool) (directGetRequest, string) {
	var req directGetRequest
	if levelTooHigh(r.hdr) {
		return req, statusRequiredAPILevel
	}
	if hasLastFor {
		if len(r.body) > 0 && json.Unmarshal(r.body, &req) != nil {
			return req, statusMalformedRequest
		}
		if lastFor == "" || req.LastBySubj != "" || req.NextBySubj != "" || len(req.MultiLast) > 0 ||
			req.Seq != 0 || req.Batch != 0 || req.StartTime != nil || req.UpToSeq != 0 || req.UpToTime != nil {
			return req, statusBadRequest
		}
		req.LastBySubj = lastFor
		return req, ""
	}
	if len(r.body) == 0 {
		return req, statusEmptyRequest
	}
	if json.Unmarshal(r.body, &req) != nil {
		return req, statusMalformedRequest
	}
	last, next, multi, start := req.LastBySubj != "", req.NextBySubj != "", len(req.MultiLast) > 0, req.StartTime != nil
	switch {
	case req.Seq == 0 && !last && !next && !multi && !start:
		return req, statusEmptyRequest
	case req.Seq > 0 && (last || start), start && last, last && (next || multi || req.Batch > 0),
		next && multi, req.UpToSeq > 0 && req.UpToTime != nil:
		return req, statusBadRequest
	}
	return req, ""
}

// directSend writes one direct get's answer to its reply subject.
type directSend struct {
	svc      *Service
	st       *stream
	reply    string
	from     Rights
	maxBytes int // what the request may send before it stops early
}

func (d directSend) status(status string, kv ...string) {
	d.svc.sh.core.Publish(d.reply, "", statusHeader(status, kv...), nil)
}

// one answers a request for a single message: by seq, the first at or
// after seq (or start_time) on next_by_subj, or the last on a subject.
func (d directSend) one(req directGetRequest) {
	log := d.st.log
	var m jetlog.Msg
	var err error
	seq := req.Seq
	if req.StartTime != nil {
		seq = log.SeqAtTime(*req.StartTime)
	}
	switch {
	case req.NextBySubj != "":
		m, err = log.Next(seq, req.NextBySubj)
	case seq > 0:
		m, err = log.Get(seq)
	default:
		m, err = log.LastBySubject(req.LastBySubj)
	}
	if err != nil {
		d.status(statusNotFound)
		return
	}
	if !d.svc.mayRead(d.from, m.Subject) {
		d.status(statusNoPermission)
		return
	}
	var hdr []byte
	if !req.NoHeaders {
		hdr = withHeaders(m.Header, "Nats-Stream", d.st.name, "Nats-Subject", m.Subject,
			"Nats-Sequence", strconv.FormatUint(m.Seq, 10), "Nats-Time-Stamp", m.Time.UTC().Format(time.RFC3339Nano))
	}
	d.svc.sh.core.Publish(d.reply, "", hdr, m.Data)
}

// servesDirect reports whether the stream named at the start of name (a
// direct get subject's tail) exists and allows direct gets. It runs on
// the publisher's reader, so it only looks.
func (svc *Service) servesDirect(name []byte) bool {
	if i := bytes.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	st := svc.stream(string(name))
	if st == nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cfg.AllowDirect
}
