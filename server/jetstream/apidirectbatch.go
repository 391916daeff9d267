package jetstream

import (
	"errors"
	"strconv"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Batch and multi-subject direct gets (ADR-31). A batch sends up to
// batch messages from seq (or start_time) on, optionally on
// next_by_subj; multi_last sends the newest message of every subject its
// filters match, up to up_to_seq or up_to_time, from seq on. Each
// message carries Nats-Num-Pending (what is left after it) and
// Nats-Last-Sequence (the seq of the message sent before it, 0 for the
// first), and a 204 EOB status with the same two ends the answer
// (multi_last's adds Nats-UpTo-Sequence), as the reference's.
//
// The work of one request is bounded: it stops after max_bytes (by
// default the server's max_pending, the bytes the requester's connection
// may have queued at all) and as soon as nothing receives its messages
// any more (the requester left, or was cut off as a slow consumer), and
// multi_last answers 413 when more than maxMultiLast subjects match
// instead of collecting them. So one huge request costs its own
// connection, and holds one read lane only as long as its bytes take.

// maxMultiLast is the most subjects one multi_last request may match:
// the reference's limit.
const maxMultiLast = 1024

// defaultMaxPending is the reference's default max_pending (64 MiB).
const defaultMaxPending = 64 << 20

// directReadAhead is how many messages a batch reads with one call.
const directReadAhead = 64

// sent reports whether a message went out; false means nothing receives
// the answer any more, so the request stops.
func (d directSend) send(hdr, data []byte) bool {
	return d.svc.sh.core.Publish(d.reply, "", hdr, data) > 0
}

// batchHeader is a batch message's headers: its own after the direct get
// ones, with the count pending after it and the seq sent before it.
func (d directSend) batchHeader(m jetlog.Msg, pending, prev uint64) []byte {
	return withHeaders(m.Header, "Nats-Stream", d.st.name, "Nats-Subject", m.Subject,
		"Nats-Sequence", strconv.FormatUint(m.Seq, 10), "Nats-Time-Stamp", m.Time.UTC().Format(time.RFC3339Nano),
		"Nats-Num-Pending", strconv.FormatUint(pending, 10), "Nats-Last-Sequence", strconv.FormatUint(prev, 10))
}

// sentBytes is what a message counts against max_bytes: its subject,
// stored headers and payload, as the reference counts.
func sentBytes(m jetlog.Msg) int { return len(m.Subject) + len(m.Header) + len(m.Data) }

// batch answers a request with batch set.
func (d directSend) batch(req directGetRequest) {
	log := d.st.log
	seq := req.Seq
	if req.StartTime != nil {
		seq = log.SeqAtTime(*req.StartTime)
	}
	var filters []string
	if req.NextBySubj != "" {
		filters = []string{req.NextBySubj}
	}
	pending := log.NumPending(seq, req.NextBySubj)
	validThrough := log.State().LastSeq
	var prev uint64
	var bytes, sent int
	from := seq
loop:
	for sent < req.Batch {
		msgs, err := log.NextBatch(from, filters, min(req.Batch-sent, directReadAhead))
		if err != nil {
			if sent > 0 && req.Batch > 1 {
				break // the end: EOB says what was sent
			}
			d.status(statusNotFound)
			return
		}
		for _, m := range msgs {
			if !d.svc.mayRead(d.from, m.Subject) {
				d.status(statusNoPermission)
				return
			}
			var hdr []byte
			if !req.NoHeaders {
				pending = max(pending, 1) - 1
				hdr = d.batchHeader(m, pending, prev)
			}
			prev, from = m.Seq, m.Seq+1
			sent++
			if !d.send(hdr, m.Data) {
				return
			}
			if bytes += sentBytes(m); bytes >= d.maxBytes {
				break loop
			}
		}
	}
	if log.State().LastSeq > validThrough {
		pending = log.NumPending(from, req.NextBySubj)
	}
	d.status("204 EOB", "Nats-Num-Pending", strconv.FormatUint(pending, 10), "Nats-Last-Sequence", strconv.FormatUint(prev, 10))
}

// multiLast answers a request with multi_last set.
func (d directSend) multiLast(req directGetRequest) {
	log := d.st.log
	upTo := req.UpToSeq
	if req.UpToTime != nil {
		// The first seq at or after the time: those before it are the
		// answer's, and none is when that is the stream's first.
		upTo = log.SeqAtTime(req.UpToTime.UTC())
		if upTo <= log.State().FirstSeq {
			d.status(statusNoResults)
			return
		}
		upTo--
	}
	last := log.State().LastSeq
	if upTo == 0 {
		upTo = last
	}
	if upTo > last && d.st.config().Storage == jetlog.StorageFile {
		// The reference's file store looks for the block holding
		// up_to_seq and, finding none, answers nothing; its memory store
		// reads it as the last seq. Clients that page by seq (nats sub
		// --last-per-subject) see the end only from the former.
		d.status(statusNoResults)
		return
	}
	seqs, err := log.LastSeqs(req.MultiLast, upTo, maxMultiLast)
	switch {
	case errors.Is(err, jetlog.ErrTooManySubjects):
		d.status(statusTooManyResults)
		return
	case err != nil:
		d.status("500 " + err.Error())
		return
	case len(seqs) == 0:
		d.status(statusNoResults)
		return
	}
	pending := uint64(len(seqs))
	var prev uint64
	var bytes, sent int
	for _, seq := range seqs {
		pending--
		if seq < req.Seq {
			continue
		}
		m, err := log.Get(seq)
		if err != nil {
			d.status(statusNotFound) // removed since it was picked
			return
		}
		if !d.svc.mayRead(d.from, m.Subject) {
			d.status(statusNoPermission)
			return
		}
		if !d.send(d.batchHeader(m, pending, prev), m.Data) {
			return
		}
		prev = seq
		if bytes += sentBytes(m); bytes >= d.maxBytes {
			break
		}
		if sent++; req.Batch > 0 && sent >= req.Batch {
			break
		}
	}
	d.status("204 EOB", "Nats-Num-Pending", strconv.FormatUint(pending, 10), "Nats-Last-Sequence", strconv.FormatUint(prev, 10),
		"Nats-UpTo-Sequence", strconv.FormatUint(upTo, 10))
}
