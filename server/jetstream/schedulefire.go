package jetstream

import (
	"bytes"
	"fmt"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// startSchedules gives a stream with allow_msg_schedules its scheduler
// at open, before capture starts, rebuilt from the live messages (see
// schedule.go). Callers hold no lock: it reads the log.
func (st *stream) startSchedules(cfg streamConfig) error {
	if !cfg.AllowMsgSchedules {
		return nil
	}
	s := newScheduler(st.sh.now, st.fireSchedule, st.purgeSchedule)
	s.setReplaying(true)
	for m, err := range st.log.Messages(0) {
		if err != nil {
			s.close()
			return fmt.Errorf("jetstream: stream %q: rebuild schedules: %w", st.name, err)
		}
		s.stored(m.Subject, m.Header, m.Seq, m.Time.UnixNano())
	}
	st.sched.Store(s)
	s.setReplaying(false)
	return nil
}

// enableSchedules gives a stream an update turned schedules on an empty
// scheduler: it holds no schedule yet, they were refused until now.
func (st *stream) enableSchedules(cfg streamConfig) {
	if cfg.AllowMsgSchedules && st.sched.Load() == nil {
		st.sched.CompareAndSwap(nil, newScheduler(st.sh.now, st.fireSchedule, st.purgeSchedule))
	}
}

// noteStored tells the scheduler, if any, of a message just stored.
// Called from a publish's completion.
func (st *stream) noteStored(m jetlog.Msg, ack jetlog.PubAck) {
	if s := st.sched.Load(); s != nil && !ack.Duplicate {
		s.stored(m.Subject, m.Header, ack.Seq, ack.TS)
	}
}

// stopSchedules stops the scheduler, waiting for a firing in progress.
func (st *stream) stopSchedules() {
	if s := st.sched.Load(); s != nil {
		s.close()
	}
}

// fireSchedule produces the message of the schedule e, due now: a copy
// of the schedule's message (or of the last message on its
// Nats-Schedule-Source) on its target, without the headers that would
// schedule it again or stop it being stored, with Nats-Scheduler and
// Nats-Schedule-Next, and with the schedule's TTL and rollup. It returns
// when the schedule fires next, or false when it is done (an @at) or
// gone (its message removed or replaced).
func (st *stream) fireSchedule(e scheduleEntry, now time.Time) (time.Time, bool) {
	if st.sealed.Load() {
		return time.Time{}, false // it takes nothing more; reopening rebuilds the schedules
	}
	m, err := st.log.Get(e.seq)
	if err != nil || m.Subject != e.subject {
		return time.Time{}, false
	}
	p, apiErr := scheduleOf(m.Header)
	if apiErr != nil || p.kind == 0 {
		return time.Time{}, false
	}
	next, repeats, ok := p.next(time.Unix(0, e.at), now)
	ttl := header.Value(m.Header, hdrScheduleTTL)
	if ttl != nil {
		if _, err := jetlog.ParseTTL(ttl); err != nil {
			ok = false
		}
	}
	target := string(header.Value(m.Header, hdrScheduleTarget))
	if !ok || target == "" {
		return time.Time{}, false
	}
	if why := st.ownerMayFire(m.Header); why != nil {
		return st.refusedFiring(e, next, repeats, why)
	}
	st.allowedFiring(e)
	rollup := header.Value(m.Header, hdrScheduleRollup)
	hdr, data := m.Header, m.Data
	if src := header.Value(m.Header, hdrScheduleSource); src != nil {
		if last, err := st.log.LastBySubject(string(src)); err == nil {
			hdr, data = last.Header, last.Data
		}
	}
	nextValue := scheduleNextPurge
	if repeats {
		nextValue = next.Format(time.RFC3339Nano)
	}
	kv := []string{hdrScheduler, e.subject, hdrScheduleNext, nextValue}
	if ttl != nil {
		kv = append(kv, "Nats-TTL", string(ttl))
	}
	if rollup != nil {
		kv = append(kv, "Nats-Rollup", string(rollup))
	}
	hdr = withHeaders(withoutHeaders(hdr, producedDrops), kv...)
	st.reportScheduled(e.subject, st.storeScheduled(target, hdr, data))
	return next, repeats
}

// reportScheduled logs the first produced message a stream fails to
// store, and the first stored after failures, not every firing.
func (st *stream) reportScheduled(schedule string, e *apiError) {
	s := st.sched.Load()
	switch {
	case s == nil:
	case e != nil && !s.failing.Swap(true):
		st.sh.log.Warn("scheduled messages not stored", "stream", st.name, "schedule", schedule, "err", e.Error())
	case e == nil && s.failing.Load() && s.failing.Swap(false):
		st.sh.log.Info("scheduled messages stored again", "stream", st.name)
	}
}

// producedDrops selects the headers a produced message does not inherit:
// the schedule's own (Nats-Schedule*, Nats-Scheduler, its owner's), and those that
// could keep it from being stored or make it expire or roll up as the
// schedule did.
func producedDrops(key []byte) bool {
	hasPrefix := func(p string) bool { return len(key) >= len(p) && bytes.EqualFold(key[:len(p)], []byte(p)) }
	return hasPrefix(hdrSchedule) || hasPrefix(expectedPrefix) || isScheduleOwner(key) ||
		bytes.EqualFold(key, []byte("Nats-Msg-Id")) || bytes.EqualFold(key, []byte("Nats-TTL")) ||
		bytes.EqualFold(key, []byte("Nats-Rollup"))
}

// storeScheduled stores a produced message through the stream's publish
// path (subject transform, TTL, rollup, retention, consumers, republish)
// without a publisher to ack, and waits for it: the scheduler's timer
// goroutine is the publisher.
func (st *stream) storeScheduled(subject string, hdr, data []byte) *apiError {
	if st.sealed.Load() {
		return errStreamSealed()
	}
	if st.full() {
		return st.fullError()
	}
	tr := st.tr.Load()
	if tr.refused != nil {
		return tr.refused
	}
	subject = tr.storedSubject(subject)
	if header.Value(hdr, "Nats-TTL") != nil {
		var e *apiError
		if hdr, e = st.checkTTL(hdr); e != nil {
			return e
		}
	}
	m := jetlog.Msg{Subject: subject, Header: hdr, Data: data}
	p := &pub{st: st, subject: subject, start: time.Now(), msg: m}
	p.done = p.stored
	if kind, ok := headerValue(hdr, "Nats-Rollup"); ok {
		st.rollup(p, m, jetlog.Expect{}, kind)
		return nil
	}
	ack, err := st.log.Append(m, jetlog.Expect{})
	p.stored(ack, err)
	if err != nil {
		return storeError(err)
	}
	return nil
}

// purgeSchedule removes the message of a fired @at schedule, or of one a
// client cancelled, as the reference purges the schedule's subject.
func (st *stream) purgeSchedule(p schedulePurge) {
	if _, err := st.log.Purge(jetlog.PurgeOptions{Subject: p.subject, Seq: p.below}); err != nil {
		st.sh.log.Warn("schedule purge", "stream", st.name, "subject", p.subject, "err", err)
	}
}
