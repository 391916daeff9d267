package jetlog

import "fmt"

// Append stores one message and returns its seq. subject must be a valid
// literal subject; hdr is a NATS header block (its Nats-Msg-Id is the dedup
// id) or nil. In DurabilityAlways it returns after the record is
// fdatasynced. A message whose id was appended within the duplicate window
// is not stored again: the ack carries the original seq and Duplicate.
// Errors: ErrBadSubject, ErrMsgTooLarge, ErrMaxMsgs, ErrMaxBytes,
// ErrMaxMsgsPerSubject (discard new), ErrWriteFenced, ErrClosed, or the
// write error (for example ENOSPC), after which the log is unchanged.
// The slices are not retained after Append returns.
// see BenchmarkAppend
func (l *Log) Append(subject string, hdr, data []byte) (PubAck, error) {
	r := l.getReq()
	r.op = opAppend
	r.one[0] = Msg{Subject: subject, Header: hdr, Data: data}
	r.msgs = r.one[:]
	if err := l.send(r); err != nil {
		l.putReq(r)
		return PubAck{}, err
	}
	var ack PubAck
	if len(r.acks) > 0 {
		ack = r.acks[0]
	}
	err := r.err
	l.putReq(r)
	return ack, err
}

// AppendBatch stores msgs in order, in one commit, and returns their acks
// (only Subject, Header and Data of each Msg are used). It stops at the
// first message that fails: the acks of the stored prefix are returned
// with that error.
func (l *Log) AppendBatch(msgs []Msg) ([]PubAck, error) {
	r := l.getReq()
	r.op = opAppend
	r.msgs = msgs
	if err := l.send(r); err != nil {
		l.putReq(r)
		return nil, err
	}
	acks := append([]PubAck(nil), r.acks...)
	err := r.err
	l.putReq(r)
	return acks, err
}

// Delete removes one message. The removal is journaled with the next
// commit and, in DurabilityAlways, synced before Delete returns. This is
// the hook for interest and work-queue retention: call it once every
// interested consumer has acked seq. Errors: ErrNotFound, ErrClosed,
// ErrWriteFenced, or the write error.
func (l *Log) Delete(seq uint64) error {
	r := l.getReq()
	r.op = opDelete
	r.seq = seq
	if err := l.send(r); err != nil {
		l.putReq(r)
		return err
	}
	err := r.err
	l.putReq(r)
	return err
}

// Sync writes pending removals and fdatasyncs the active segment, whatever
// the durability mode.
func (l *Log) Sync() error {
	r := l.getReq()
	r.op = opSync
	if err := l.send(r); err != nil {
		l.putReq(r)
		return err
	}
	err := r.err
	l.putReq(r)
	if err != nil {
		return fmt.Errorf("jetlog: sync: %w", err)
	}
	return nil
}
