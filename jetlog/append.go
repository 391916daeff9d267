package jetlog

import "fmt"

// Append stores one message and returns its seq. Only Subject, Header
// and Data of m are used: Subject must be a valid literal subject, Header
// a NATS header block (its Nats-Msg-Id is the dedup id) or nil. m is
// stored only if expect holds when its seq is assigned (Expect{} always
// holds). In DurabilityAlways it returns after the record is fdatasynced.
// A message whose id was appended within the duplicate window is not
// stored again: the ack carries the original seq and Duplicate.
// Errors: ErrBadSubject, ErrMsgTooLarge, ErrMaxMsgs, ErrMaxBytes,
// ErrMaxMsgsPerSubject (discard new), a *WrongLastSeqError or
// *WrongLastMsgIDError (see Expect), ErrWriteFenced, ErrClosed, or the
// write error (for example ENOSPC), after which the log is unchanged.
// The slices are not retained after Append returns.
// see BenchmarkAppend
func (l *Log) Append(m Msg, expect Expect) (PubAck, error) {
	r := l.getReq()
	r.op = opAppend
	r.one[0] = Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}
	r.msgs = r.one[:]
	r.expect = expect
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
// (only Subject, Header and Data of each Msg are used, and Time with
// Expect.KeepTime, for a mirror's copies). expect is checked for every
// message. It stops at the first message that fails: the acks of the
// stored prefix are returned with that error. Errors as for Append.
func (l *Log) AppendBatch(msgs []Msg, expect Expect) ([]PubAck, error) {
	r := l.getReq()
	r.op = opAppend
	r.msgs = msgs
	r.expect = expect
	if err := l.send(r); err != nil {
		l.putReq(r)
		return nil, err
	}
	acks := append([]PubAck(nil), r.acks...)
	err := r.err
	l.putReq(r)
	return acks, err
}

// AppendAsync hands m to the appender and returns without waiting; done
// is called once with the result, exactly as Append would return it.
//
//   - Only Subject, Header and Data of m are used. jetlog reads the
//     Header and Data slices until done is called and keeps nothing of
//     them after: the caller must not modify them before then, and may
//     reuse them from inside done on.
//   - done runs on the appender goroutine, after the commit holding m is
//     durable as the stream's durability mode promises (fdatasynced in
//     DurabilityAlways), or after m was refused. It must not block: every
//     later commit of the stream waits for it. It must not call this
//     Log's methods that go through the appender (Append*, Delete, Purge,
//     Sync, UpdateConfig, Close): that deadlocks. Reads are fine.
//   - Order: appends are committed, and their done called, in the order
//     their AppendAsync calls returned; so one goroutine's appends are
//     stored in the order it made them.
//   - Refusals (ErrBadSubject, ErrMsgTooLarge, ErrMaxMsgs, ErrMaxBytes,
//     ErrMaxMsgsPerSubject, a failed precondition) concern m alone; the
//     other messages of the same commit are stored.
//   - Backpressure: while Options.AppendQueue requests already wait for
//     the appender, AppendAsync blocks until there is room (at most
//     about one commit, one write and fsync). A full stream thus slows
//     its publishers down instead of queueing without bound.
//   - After Close has begun, done is called at once, on the caller's
//     goroutine, with ErrClosed.
//
// It allocates nothing per call (the request comes from a pool); a done
// made once and reused costs nothing either (see BenchmarkAppendAsync).
func (l *Log) AppendAsync(m Msg, expect Expect, done func(PubAck, error)) {
	r := l.getReq()
	r.op = opAppend
	r.one[0] = Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}
	r.msgs = r.one[:]
	r.expect = expect
	r.async, r.cb = true, done
	if err := l.enqueue(r); err != nil {
		l.putReq(r)
		done(PubAck{}, err)
	}
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

// DeleteAsync is Delete without waiting, and without ever blocking: it
// may be called from an AppendAsync callback (to drop a message nobody is
// interested in, say). The delete is committed after the commit running
// now, like Delete (journaled, and synced in DurabilityAlways), and done,
// if not nil, is then called on the appender goroutine with Delete's
// error; the rules for AppendAsync's done apply. Once Close has begun
// (and after the appender took the deletes already waiting) done gets
// ErrClosed at once, on the caller's goroutine.
func (l *Log) DeleteAsync(seq uint64, done func(error)) {
	r := l.getReq()
	r.op, r.seq = opDelete, seq
	r.async, r.delCB = true, done
	l.deferMu.Lock()
	if l.deferStop {
		l.deferMu.Unlock()
		l.putReq(r)
		if done != nil {
			done(ErrClosed)
		}
		return
	}
	l.deferred = append(l.deferred, r)
	l.deferMu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // the appender is already told
	}
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
