package jetstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// What a captured publish says and is answered: the headers that ask for
// preconditions, rollups and features, and the pub ack or its error.

// appendPubAck encodes {"stream":..,"seq":..[,"duplicate":true]} without
// reflection; stream names need no JSON escaping (validName).
func appendPubAck(b []byte, stream, domain string, ack jetlog.PubAck) []byte {
	b = append(b, `{"stream":"`...)
	b = append(b, stream...)
	if domain != "" { // a subject token: no JSON escaping needed
		b = append(b, `","domain":"`...)
		b = append(b, domain...)
	}
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, ack.Seq, 10)
	if ack.Duplicate {
		b = append(b, `,"duplicate":true`...)
	}
	return append(b, '}')
}

// publishHeaders reports, in one pass over a publish's header names,
// whether it carries Nats-Expected-* preconditions or a Nats-Rollup, so
// that plain messages with headers pay no more than that pass.
// see BenchmarkJetStream
func publishHeaders(hdr []byte) (expects, rollup, ttl, other bool) {
	for key := range header.Lines(hdr) {
		switch {
		case len(key) > len(expectedPrefix) && bytes.EqualFold(key[:len(expectedPrefix)], []byte(expectedPrefix)):
			expects = true
		case bytes.EqualFold(key, []byte("Nats-Rollup")):
			rollup = true
		case bytes.EqualFold(key, []byte("Nats-TTL")):
			ttl = true
		case bytes.EqualFold(key, []byte("Nats-Batch-Id")), bytes.EqualFold(key, []byte("Nats-Incr")),
			len(key) >= len(hdrSchedule) && bytes.EqualFold(key[:len(hdrSchedule)], []byte(hdrSchedule)): // and Nats-Scheduler, Nats-Schedule-*
			other = true
		}
	}
	return expects, rollup, ttl, other
}

// refuseHeaders answers a publish asking for a feature bus does not have
// (atomic batches, counters) with the reference's error for a
// stream that does not allow it, rather than storing it as a plain
// message. Schedule headers are checked after it (checkSchedule).
func (st *stream) refuseHeaders(hdr []byte) *apiError {
	switch {
	case header.Value(hdr, "Nats-Batch-Id") != nil:
		return newAPIError(400, 10174, "atomic publish is disabled")
	case header.Value(hdr, "Nats-Incr") != nil:
		return newAPIError(400, 10168, "message counters is disabled")
	}
	return nil
}

const expectedPrefix = "Nats-Expected-"

// fastBatchSuffix ends the reply subject of a fast batch's messages.
const fastBatchSuffix = ".$FI"

// expectations reads a publish's Nats-Expected-* headers: the stream's
// name is checked here; the rest become preconditions the appender
// checks where it assigns the seq. Their names match case and all.
func (st *stream) expectations(hdr []byte) (jetlog.Expect, *apiError) {
	var ex jetlog.Expect
	if v, ok := exactHeaderValue(hdr, "Nats-Expected-Stream"); ok && v != st.name {
		return ex, errExpectedStream()
	}
	if v, ok := exactHeaderValue(hdr, "Nats-Expected-Last-Sequence"); ok {
		ex.LastSeq, ex.HasLastSeq = parseExpectedSeq(v), true
	}
	if v, ok := exactHeaderValue(hdr, "Nats-Expected-Last-Subject-Sequence"); ok {
		ex.LastSubjectSeq, ex.HasLastSubjectSeq = parseExpectedSeq(v), true
		ex.LastSubject, _ = exactHeaderValue(hdr, "Nats-Expected-Last-Subject-Sequence-Subject")
	}
	ex.LastMsgID, _ = exactHeaderValue(hdr, "Nats-Expected-Last-Msg-Id")
	return ex, nil
}

// parseExpectedSeq reads an expected seq; one that is not a number can
// never be the last seq, so it fails with what the stream has.
func parseExpectedSeq(v string) uint64 {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return math.MaxUint64
	}
	return n
}

// storeError maps jetlog's refusals to the reference's pub-ack errors.
func storeError(err error) *apiError {
	var wrongSeq *jetlog.WrongLastSeqError
	var wrongID *jetlog.WrongLastMsgIDError
	var api *apiError
	switch {
	case errors.As(err, &api): // already the client's answer
		return api
	case errors.Is(err, jetlog.ErrMaxMsgs):
		return errMaxMsgs()
	case errors.Is(err, jetlog.ErrMaxBytes):
		return errMaxBytes()
	case errors.Is(err, jetlog.ErrMaxMsgsPerSubject):
		return errMaxMsgsPerSubject()
	case errors.Is(err, jetlog.ErrMsgTooLarge):
		return errMsgTooLarge()
	case errors.As(err, &wrongSeq):
		return errWrongLastSeq(wrongSeq.Last)
	case errors.As(err, &wrongID):
		return errWrongLastMsgID(wrongID.Last)
	case isNoSpace(err):
		return errInsufficientStorage()
	default:
		return errStoreFailed(err)
	}
}

func (st *stream) ackError(reply string, e *apiError) {
	st.publishes.refused.Add(1)
	if reply == "" {
		return
	}
	b, _ := json.Marshal(pubAck{Error: e, Stream: st.name, Domain: st.sh.domain})
	st.sh.core.Publish(reply, "", nil, b)
}
