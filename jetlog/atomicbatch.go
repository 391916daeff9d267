package jetlog

import (
	"errors"
	"fmt"
)

// ErrBatchDuplicate is matched by every *BatchDuplicateError.
var ErrBatchDuplicate = errors.New("jetlog: atomic batch holds a duplicate")

// BatchDuplicateError refuses an atomic batch (AppendAtomic) because one
// of its messages has a Nats-Msg-Id seen within the duplicate window, or
// earlier in the batch: a batch is stored whole or not at all, so it
// cannot skip one message as a plain append would.
type BatchDuplicateError struct {
	Index int    // of the message in the batch
	Seq   uint64 // the seq that holds the id
}

func (e *BatchDuplicateError) Error() string {
	return fmt.Sprintf("jetlog: atomic batch message %d duplicates seq %d", e.Index, e.Seq)
}

// Is lets errors.Is(err, ErrBatchDuplicate) match.
func (e *BatchDuplicateError) Is(target error) bool { return target == ErrBatchDuplicate }

// AppendAtomic stores msgs in order in one commit, all of them or none:
// if one is refused (its expects[i] failed, a limit, a duplicate id:
// *BatchDuplicateError), nothing of the batch is stored and the error
// names the first refusal; the acks are then nil. expects, if not nil,
// holds one Expect per message, checked where that message gets its seq
// (after the batch's earlier messages). The batch is written with one
// write, and recovery after a crash keeps all of it or none of it (see
// batchFlag). Only Subject, Header and Data of each Msg are used; the
// slices are not retained.
func (l *Log) AppendAtomic(msgs []Msg, expects []Expect) ([]PubAck, error) {
	if expects != nil && len(expects) != len(msgs) {
		return nil, fmt.Errorf("jetlog: append atomic: %d expects for %d messages", len(expects), len(msgs))
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	r := l.getReq()
	r.op = opAppend
	r.msgs, r.expects, r.atomic = msgs, expects, true
	if err := l.send(r); err != nil {
		l.putReq(r)
		return nil, err
	}
	var acks []PubAck
	if r.err == nil {
		acks = append([]PubAck(nil), r.acks...)
	}
	err := r.err
	l.putReq(r)
	return acks, err
}

// undoPoint is the commit's state before an atomic request was staged,
// so that a refusal can take the request out again.
type undoPoint struct {
	staged      int
	buf         int
	idx         indexMark
	next        uint64
	stagedBytes uint64
	rollup      rollupMark
}

func (l *Log) undoPoint(next, stagedBytes uint64) undoPoint {
	ap := &l.ap
	return undoPoint{staged: len(ap.staged), buf: len(ap.buf), idx: ap.idx.mark(), next: next, stagedBytes: stagedBytes, rollup: l.rollupMark()}
}

// undo takes r's staged messages out of the commit being built and
// returns the commit's next seq and staged bytes as they were before r.
func (l *Log) undo(r *request, u undoPoint) (uint64, uint64) {
	ap := &l.ap
	for _, s := range ap.staged[u.staged:] {
		if s.id != nil {
			delete(ap.ids, string(s.id))
		}
		if ap.perSubj != nil {
			subj := s.req.msgs[s.idx].Subject
			if ap.perSubj[subj]--; ap.perSubj[subj] <= 0 {
				delete(ap.perSubj, subj)
			}
		}
	}
	ap.staged = ap.staged[:u.staged]
	ap.deletes, ap.rollFloor = ap.deletes[:u.rollup.deletes], u.rollup.floor
	ap.buf = ap.buf[:u.buf]
	ap.idx.truncate(u.idx)
	r.acks = r.acks[:0]
	return u.next, u.stagedBytes
}

// recordFlagsFor is the header-length flags of a message record.
func recordFlagsFor(compressed, more bool) uint32 {
	var f uint32
	if compressed {
		f |= compressedFlag
	}
	if more {
		f |= batchFlag
	}
	return f
}
