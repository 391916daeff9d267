package jetlog

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Expect holds the preconditions of one append (the Nats-Expected-*
// headers). The appender checks them at the moment it assigns the
// message its seq, after every message committed or staged before it,
// in the same commit too, so a check and the append it guards cannot be
// separated by another writer. The zero value expects nothing.
//
// The checks run in the reference server's order, after the subject and
// size checks: LastSubjectSeq, LastSeq, then the duplicate check (a
// duplicate within the window is acknowledged as a duplicate, whatever
// LastMsgID says), then LastMsgID, then the discard-new limits. A failed
// precondition stores nothing and records no msg id.
type Expect struct {
	// LastSeq, when HasLastSeq is set, must be the stream's last seq: the
	// highest ever assigned, which a purge or delete does not lower
	// (State().LastSeq); 0 for a stream that never stored anything.
	LastSeq    uint64
	HasLastSeq bool
	// LastSubjectSeq, when HasLastSubjectSeq is set, must be the seq of
	// the newest stored message on LastSubject, or 0 if none is stored.
	// An empty LastSubject means the message's own subject; it may be a
	// wildcard filter (the newest message matching it counts).
	LastSubjectSeq    uint64
	LastSubject       string
	HasLastSubjectSeq bool
	// LastMsgID, when not empty, must be the Nats-Msg-Id of the newest
	// message the stream stored ("" if it had none). A delete does not
	// change that id; after Open or a purge it is read again from the
	// message at State().LastSeq, as the reference does. As on the wire,
	// an empty LastMsgID expects nothing.
	LastMsgID string
	// NoDedup stores a message even if its Nats-Msg-Id was seen within
	// the duplicate window (a mirror copies what its origin stored).
	NoDedup bool
	// DuplicateOnly acknowledges the message if its Nats-Msg-Id is a
	// duplicate within the window, and otherwise stores nothing and fails
	// with ErrNotDuplicate: a publish the stream refuses unless it is a
	// resend (a counter publish without an increment is acked as the
	// duplicate it is, as the reference does).
	DuplicateOnly bool
	// KeepTime stores each message with its own Msg.Time rather than the
	// commit's (a mirror keeps the times its origin stored), raised where
	// needed so that times never decrease with seq. A zero Time gets the
	// commit's.
	KeepTime bool
	// Group, when set, ties the appends that carry it together: once one
	// of them is refused (by any rule above, a limit or a bad subject),
	// every later one is refused with ErrGroupFailed, so that a caller
	// pipelining a sequence of appends stores nothing after the first
	// refusal. A duplicate is no refusal.
	Group *Group
	// Rollup removes, in the message's own commit, the older messages it
	// rolls up (see Rollup); nothing if the message is a duplicate. A
	// request with a rollup ends its commit.
	Rollup Rollup
}

// Group is shared by the appends of one sequence (see Expect.Group). Its
// zero value is ready; it is safe for concurrent use.
type Group struct{ failed atomic.Bool }

// Failed reports whether an append of the group was refused.
func (g *Group) Failed() bool { return g.failed.Load() }

// ErrGroupFailed refuses an append whose Expect.Group had an earlier
// append refused.
var ErrGroupFailed = errors.New("jetlog: an earlier append of the group was refused")

// ErrNotDuplicate is the refusal of an Expect.DuplicateOnly append whose
// msg id is not a duplicate.
var ErrNotDuplicate = errors.New("jetlog: not a duplicate")

var (
	// ErrWrongLastSeq is matched by every *WrongLastSeqError.
	ErrWrongLastSeq = errors.New("jetlog: wrong last sequence")
	// ErrWrongLastMsgID is matched by every *WrongLastMsgIDError.
	ErrWrongLastMsgID = errors.New("jetlog: wrong last msg id")
)

// WrongLastSeqError is the refusal of an append whose Expect.LastSeq or
// Expect.LastSubjectSeq did not hold. It matches ErrWrongLastSeq.
type WrongLastSeqError struct {
	// Subject is the subject filter that was checked (LastSubjectSeq), or
	// empty for the stream's last seq (LastSeq).
	Subject  string
	Expected uint64
	Last     uint64 // what the stream has
}

func (e *WrongLastSeqError) Error() string {
	if e.Subject == "" {
		return fmt.Sprintf("jetlog: wrong last sequence: expected %d, stream has %d", e.Expected, e.Last)
	}
	return fmt.Sprintf("jetlog: wrong last sequence for %q: expected %d, stream has %d", e.Subject, e.Expected, e.Last)
}

// Is lets errors.Is(err, ErrWrongLastSeq) match.
func (e *WrongLastSeqError) Is(target error) bool { return target == ErrWrongLastSeq }

// WrongLastMsgIDError is the refusal of an append whose Expect.LastMsgID
// did not hold. It matches ErrWrongLastMsgID.
type WrongLastMsgIDError struct {
	Expected string
	Last     string // the newest stored message's msg id; empty if it had none
}

func (e *WrongLastMsgIDError) Error() string {
	return fmt.Sprintf("jetlog: wrong last msg id: expected %q, stream has %q", e.Expected, e.Last)
}

// Is lets errors.Is(err, ErrWrongLastMsgID) match.
func (e *WrongLastMsgIDError) Is(target error) bool { return target == ErrWrongLastMsgID }

// checkSeqs checks the seq preconditions of m, which would get seq next.
// It runs in the appender.
func (l *Log) checkSeqs(m *Msg, ex *Expect, next uint64) error {
	if ex.HasLastSubjectSeq {
		subject := ex.LastSubject
		if subject == "" {
			subject = m.Subject
		}
		if last := l.lastSubjectSeq(subject); last != ex.LastSubjectSeq {
			return &WrongLastSeqError{Subject: subject, Expected: ex.LastSubjectSeq, Last: last}
		}
	}
	if ex.HasLastSeq && ex.LastSeq != next-1 {
		return &WrongLastSeqError{Expected: ex.LastSeq, Last: next - 1}
	}
	return nil
}

// checkMsgID checks the msg id precondition. It runs in the appender.
func (l *Log) checkMsgID(ex *Expect) error {
	if ex.LastMsgID == "" {
		return nil
	}
	last, err := l.lastMsgID()
	if err != nil {
		return err
	}
	if string(last) != ex.LastMsgID {
		return &WrongLastMsgIDError{Expected: ex.LastMsgID, Last: string(last)}
	}
	return nil
}

// lastSubjectSeq returns the seq of the newest message matching filter,
// counting the messages staged in the current commit. The caller made
// sure that nothing staged or deleted in this commit can remove it (see
// needsOwnCommit).
func (l *Log) lastSubjectSeq(filter string) uint64 {
	var buf [1]matcher
	fs := oneFilter(filter, &buf)
	ap := &l.ap
	for i := len(ap.staged) - 1; i >= 0; i-- {
		s := &ap.staged[i]
		if fs.matches(s.req.msgs[s.idx].Subject) {
			return s.seq
		}
	}
	return l.lastSeqMatching(fs)
}

// needsOwnCommit reports whether r must wait for the next commit: its
// subject seq precondition needs the state after the deletes and limit
// removals that the requests staged before it in this commit will make,
// which are applied only when the commit is published.
func (l *Log) needsOwnCommit(r *request) bool {
	if r.op != opAppend || !r.expect.HasLastSubjectSeq && !anySubjectSeq(r.expects) {
		return false
	}
	ap, cfg := &l.ap, &l.cfg
	removes := cfg.Discard == DiscardOld && (cfg.MaxMsgs > 0 || cfg.MaxBytes > 0)
	return len(ap.deletes) > 0 || len(ap.staged) > 0 && removes
}

// lastMsgID returns the msg id of the newest stored message (nil if it
// had none), counting the messages staged in the current commit. After
// Open and after a purge it is read from the message at the last seq on
// first need (empty if that message is gone). It runs in the appender.
func (l *Log) lastMsgID() ([]byte, error) {
	ap := &l.ap
	if n := len(ap.staged); n > 0 {
		return ap.staged[n-1].id, nil
	}
	if !ap.lastIDKnown {
		id, err := l.readMsgID(l.cat.last)
		if err != nil {
			return nil, fmt.Errorf("jetlog: read last msg id: %w", err)
		}
		ap.lastID, ap.lastIDKnown = append(ap.lastID[:0], id...), true
	}
	return ap.lastID, nil
}

// readMsgID reads the msg id of seq; nil if seq is not stored or has none.
func (l *Log) readMsgID(seq uint64) ([]byte, error) {
	m, seg := l.cat.locate(seq)
	if m == nil || m.subj == nil {
		return nil, nil
	}
	r, err := seg.readRecord(l.seal, make([]byte, m.size), m.off)
	if err != nil {
		return nil, err
	}
	return msgID(r.hdr), nil
}

// anySubjectSeq reports whether an atomic batch's expects check a
// subject's last seq (see needsOwnCommit).
func anySubjectSeq(expects []Expect) bool {
	for i := range expects {
		if expects[i].HasLastSubjectSeq {
			return true
		}
	}
	return false
}

// admit is admitChecked for a message of a Group: refused at once after
// an earlier refusal, and failing the group when refused itself.
func (l *Log) admit(m *Msg, ex *Expect, next, stagedBytes uint64, now int64) (PubAck, int, []byte, error) {
	if ex.Group == nil {
		return l.admitChecked(m, ex, next, stagedBytes, now)
	}
	if ex.Group.failed.Load() {
		return PubAck{}, 0, nil, fmt.Errorf("jetlog: append %q: %w", m.Subject, ErrGroupFailed)
	}
	ack, size, id, err := l.admitChecked(m, ex, next, stagedBytes, now)
	if err != nil {
		ex.Group.failed.Store(true)
	}
	return ack, size, id, err
}
