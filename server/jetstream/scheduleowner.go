package jetstream

import (
	"bytes"
	"container/heap"
	"math"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// A schedule makes the server act later for whoever set it up: when it
// fires, it publishes to its Nats-Schedule-Target and, with
// Nats-Schedule-Source, reads that subject. Its owner (owner.go) is the
// user who published the schedule message; the schedule is checked
// against the owner's rights when it is published (refused with a 10403
// pub ack) and again every time it is due, since a reload may have
// shrunk them or removed the user meanwhile. A firing the rights do not
// cover does not happen (logged once per schedule, until it fires
// again): a repeating schedule skips it and tries at its next time; an
// @at is held and tried again when the rights next change (a reload),
// so it fires late rather than never.
//
// Schedules are rebuilt from the stored messages at open, so the owner
// is stored with the schedule message, in hdrScheduleOwner, which the
// server sets on every way a message carrying Nats-Schedule comes into
// a stream: a publish (the publisher's name), an atomic batch (each
// message's publisher) and a copy by a mirror or source (the target's
// owner, the user that flow acts for). What a client sent in it is
// overwritten, so it cannot be forged. When the server acts for the
// operator (no user: authorization off, a token, or the server itself
// relaying a republish or a push delivery), an owner the message
// already names is kept: the operator may do anything, and a relay must
// not turn a user's schedule into the operator's. A schedule without
// the header (stored before owners were recorded) is the operator's.

// hdrScheduleOwner names a schedule's owner on its stored message (bus's
// own header; docs/api.md).
const hdrScheduleOwner = "Bus-Schedule-Owner"

// scheduleHeld is the due time of an @at its owner's rights refused: it
// sorts after every real time (and before inFlight), so it waits for
// scheduler.rightsChanged.
const scheduleHeld = math.MaxInt64 - 1

// isScheduleOwner selects the owner header (for withoutHeaders).
func isScheduleOwner(key []byte) bool { return bytes.EqualFold(key, []byte(hdrScheduleOwner)) }

// ownedSchedule returns hdr with its owner set to owner if it carries a
// Nats-Schedule, replacing any the message names; the operator ("")
// keeps what it names.
func ownedSchedule(hdr []byte, owner string) []byte {
	if owner == "" || len(hdr) == 0 || header.Value(hdr, hdrSchedule) == nil {
		return hdr
	}
	return withHeader(withoutHeaders(hdr, isScheduleOwner), hdrScheduleOwner, owner)
}

// ownSchedule sets a captured publish's schedule owner from its
// publisher, from, and returns the header block to store and the
// owner's rights (nil: the operator's).
func (st *stream) ownSchedule(from Rights, hdr []byte) ([]byte, Rights, *apiError) {
	if name := ownerOf(from); name != "" {
		return ownedSchedule(hdr, name), from, nil
	}
	owner, e := st.scheduleOwner(hdr)
	return hdr, owner, e
}

// checkOwnedSchedule is checkSchedule, and for a schedule the owner's
// rights over what it does.
func (st *stream) checkOwnedSchedule(owner Rights, subject string, hdr []byte) ([]byte, bool, *apiError) {
	hdr, isSchedule, e := st.checkSchedule(subject, hdr)
	if e == nil && isSchedule {
		e = st.sh.authorize(owner, scheduleFlow(hdr))
	}
	return hdr, isSchedule, e
}

// ownCopied sets the owner of a schedule a mirror or source copies in:
// the target stream's owner.
func (st *stream) ownCopied(hdr []byte) []byte {
	if len(hdr) == 0 || header.Value(hdr, hdrSchedule) == nil {
		return hdr
	}
	return ownedSchedule(hdr, st.config().owner)
}

// scheduleOwner resolves the owner a schedule names to its current
// rights (nil: the operator's, or not a schedule).
func (st *stream) scheduleOwner(hdr []byte) (Rights, *apiError) {
	if len(hdr) == 0 || header.Value(hdr, hdrSchedule) == nil {
		return nil, nil // what a plain message names is nobody's business
	}
	name := header.Value(hdr, hdrScheduleOwner)
	if len(name) == 0 {
		return nil, nil
	}
	return st.sh.ownerRights(string(name))
}

// scheduleFlow is what a schedule has the server do: publish to its
// target and, with a source, read it.
func scheduleFlow(hdr []byte) flow {
	f := flow{publishes: []string{string(header.Value(hdr, hdrScheduleTarget))}}
	if src := header.Value(hdr, hdrScheduleSource); src != nil {
		f.reads = []string{string(src)}
	}
	return f
}

// ownerMayFire checks a schedule's flow against its owner's current
// rights when it is due.
func (st *stream) ownerMayFire(hdr []byte) *apiError {
	owner, e := st.scheduleOwner(hdr)
	if e != nil {
		return e
	}
	return st.sh.authorize(owner, scheduleFlow(hdr))
}

// checkBatchSchedule vets the schedule headers of a message of an atomic
// batch as a publish's (checkSchedule), with its owner's rights (its
// owner was set when it was staged), and adds what a schedule stores.
func (st *stream) checkBatchSchedule(m *jetlog.Msg) *apiError {
	owner, e := st.scheduleOwner(m.Header)
	if e != nil {
		return e
	}
	hdr, _, e := st.checkOwnedSchedule(owner, m.Subject, m.Header)
	if e != nil {
		return e
	}
	m.Header = hdr
	return nil
}

// refusedFiring is what fireSchedule returns for a firing the owner's
// rights do not cover (see the top of this file), logging it once per
// schedule.
func (st *stream) refusedFiring(e scheduleEntry, next time.Time, repeats bool, why *apiError) (time.Time, bool) {
	if s := st.sched.Load(); s != nil && s.setRefused(e, true) {
		st.sh.log.Warn("schedule not fired: its owner's rights do not cover it", "stream", st.name, "schedule", e.subject, "err", why.Description)
	}
	if !repeats {
		return time.Unix(0, scheduleHeld), true
	}
	return next, true
}

// allowedFiring notes that a schedule refused before fires again.
func (st *stream) allowedFiring(e scheduleEntry) {
	if s := st.sched.Load(); s != nil && e.refused && s.setRefused(e, false) {
		st.sh.log.Info("schedule fires again: its owner's rights cover it", "stream", st.name, "schedule", e.subject)
	}
}

// setRefused records whether the schedule e (if still held as it was
// fired) was last refused, and reports whether that changed.
func (s *scheduler) setRefused(e scheduleEntry, refused bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.entries[e.subject]
	if !ok || cur.seq != e.seq || cur.refused == refused {
		return false
	}
	cur.refused = refused
	return true
}

// rightsChanged makes the held @at schedules due now, to be checked
// again against their owners' new rights.
func (s *scheduler) rightsChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rightsGen++
	now := s.now().UnixNano()
	for _, e := range s.entries {
		if e.at == scheduleHeld {
			e.at = now
			heap.Fix(&s.due, e.index)
		}
	}
	s.armLocked()
}

// schedulesRightsChanged tells the stream's scheduler, if any, that
// users' rights changed.
func (st *stream) schedulesRightsChanged() {
	if s := st.sched.Load(); s != nil {
		s.rightsChanged()
	}
}
