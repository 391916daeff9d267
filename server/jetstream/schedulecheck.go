package jetstream

import (
	"bytes"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// The message schedule headers (the reference's names).
const (
	hdrSchedule         = "Nats-Schedule"
	hdrScheduleTimeZone = "Nats-Schedule-Time-Zone"
	hdrScheduleTTL      = "Nats-Schedule-TTL"
	hdrScheduleRollup   = "Nats-Schedule-Rollup"
	hdrScheduleTarget   = "Nats-Schedule-Target"
	hdrScheduleSource   = "Nats-Schedule-Source"
	hdrScheduler        = "Nats-Scheduler"     // on a produced message: its schedule's subject
	hdrScheduleNext     = "Nats-Schedule-Next" // on a produced message: the next firing, or:
	scheduleNextPurge   = "purge"
)

// The reference's errors for schedule headers and settings.
func errSchedulesDisabled() *apiError {
	return newAPIError(400, 10188, "message schedules is disabled")
}
func errSchedulePattern() *apiError {
	return newAPIError(400, 10189, "message schedules pattern is invalid")
}
func errScheduleTarget() *apiError {
	return newAPIError(400, 10190, "message schedules target is invalid")
}
func errScheduleTTL() *apiError {
	return newAPIError(400, 10191, "message schedules invalid per-message TTL")
}
func errScheduleRollup() *apiError {
	return newAPIError(400, 10192, "message schedules invalid rollup")
}
func errScheduleSource() *apiError {
	return newAPIError(400, 10203, "message schedules source is invalid")
}
func errScheduler() *apiError {
	return newAPIError(400, 10212, "message schedules invalid scheduler")
}
func errScheduleTimeZone() *apiError {
	return newAPIError(400, 10223, "message schedules time zone is invalid")
}

// checkScheduleConfig applies the reference's rules for
// allow_msg_schedules that need no other stream: not with discard new,
// and roll-ups on (a schedule replaces its subject's last one), which it
// turns on as the reference does outside its pedantic mode.
func (c *streamConfig) checkScheduleConfig() *apiError {
	if !c.AllowMsgSchedules {
		return nil
	}
	if c.Discard == jetlog.DiscardNew {
		return errStreamConfig("message scheduling cannot use discard new")
	}
	c.AllowRollup, c.DenyPurge = true, false
	return nil
}

// checkScheduleSourcing refuses schedules on a mirror or a stream with
// sources (the reference's 10186 and 10187).
func (c *streamConfig) checkScheduleSourcing() *apiError {
	switch {
	case !c.AllowMsgSchedules:
		return nil
	case c.Mirror != nil:
		return newAPIError(400, 10186, "stream mirrors can not also schedule messages")
	case len(c.Sources) > 0:
		return newAPIError(400, 10187, "stream source can not also schedule messages")
	}
	return nil
}

// scheduleOf reads a message's Nats-Schedule with its time zone. A
// message without Nats-Schedule has the zero pattern (kind 0).
func scheduleOf(hdr []byte) (schedulePattern, *apiError) {
	var loc *time.Location
	if tz, ok := header.Lookup(hdr, hdrScheduleTimeZone); ok {
		var err error
		if len(tz) == 0 {
			return schedulePattern{}, errScheduleTimeZone()
		}
		if loc, err = time.LoadLocation(string(tz)); err != nil {
			return schedulePattern{}, errScheduleTimeZone()
		}
	}
	v := header.Value(hdr, hdrSchedule)
	if v == nil {
		return schedulePattern{}, nil
	}
	p, ok := parseSchedulePattern(string(v), loc)
	if !ok {
		return schedulePattern{}, errSchedulePattern()
	}
	return p, nil
}

// checkSchedule vets a publish's schedule headers as the reference does,
// in its order, and returns the header block to store: a schedule gets
// Nats-Rollup: sub, so that it replaces the subject's older messages.
// isSchedule says it now carries a rollup. Clients may send
// Nats-Schedule-Next only as "purge", with Nats-Scheduler naming a
// schedule's subject, to cancel that schedule.
func (st *stream) checkSchedule(subject string, hdr []byte) (out []byte, isSchedule bool, e *apiError) {
	cfg := st.config()
	allowed := cfg.AllowMsgSchedules
	disabledOr := func(e *apiError) *apiError {
		if !allowed {
			return errSchedulesDisabled()
		}
		return e
	}
	p, e := scheduleOf(hdr)
	if e != nil {
		return hdr, false, disabledOr(e)
	}
	if p.kind != 0 {
		now := st.sh.now()
		next, _, ok := p.next(now, now)
		switch {
		case !ok:
			return hdr, false, disabledOr(errSchedulePattern())
		case !next.IsZero():
			if hdr, e = cfg.checkScheduleHeaders(subject, hdr); e != nil {
				return hdr, false, e
			}
			isSchedule = true
		}
	}
	if e := st.checkScheduleNext(subject, hdr, allowed); e != nil {
		return hdr, false, e
	}
	return hdr, isSchedule, nil
}

// checkScheduleHeaders vets the headers that go with a Nats-Schedule.
func (c *streamConfig) checkScheduleHeaders(subject string, hdr []byte) ([]byte, *apiError) {
	if !c.AllowMsgSchedules {
		return hdr, errSchedulesDisabled()
	}
	ttl := header.Value(hdr, hdrScheduleTTL)
	if ttl != nil {
		if _, err := jetlog.ParseTTL(ttl); err != nil {
			return hdr, errScheduleTTL()
		}
	}
	if r := header.Value(hdr, hdrScheduleRollup); r != nil && string(r) != "sub" {
		return hdr, errScheduleRollup()
	}
	if ttl != nil && !c.AllowMsgTTL {
		return hdr, newAPIError(400, 10166, "per-message TTL is disabled")
	}
	target := string(header.Value(hdr, hdrScheduleTarget))
	if !subjects.ValidLiteral(target) || target == subject {
		return hdr, errScheduleTarget()
	}
	source := string(header.Value(hdr, hdrScheduleSource))
	if source != "" && (source == target || source == subject || !subjects.ValidLiteral(source)) {
		return hdr, errScheduleSource()
	}
	if !c.captures(target) {
		return hdr, errScheduleTarget()
	}
	if source != "" && !c.captures(source) {
		return hdr, errScheduleSource()
	}
	switch r := header.Value(hdr, "Nats-Rollup"); {
	case r == nil:
		return withHeader(hdr, "Nats-Rollup", "sub"), nil
	case !bytes.EqualFold(r, []byte("sub")):
		return hdr, errScheduleRollup()
	}
	return hdr, nil
}

// captures reports whether one of the stream's subjects takes subject.
func (c *streamConfig) captures(subject string) bool {
	for _, s := range c.Subjects {
		if subjects.Overlap(s, subject) {
			return true
		}
	}
	return false
}

// checkScheduleNext vets Nats-Schedule-Next and Nats-Scheduler on a
// publish: only "purge", naming a subject that holds a schedule (or
// nothing), and never Nats-Scheduler alone.
func (st *stream) checkScheduleNext(subject string, hdr []byte, allowed bool) *apiError {
	scheduler := string(header.Value(hdr, hdrScheduler))
	next := header.Value(hdr, hdrScheduleNext)
	if next == nil {
		if scheduler != "" {
			return errScheduler()
		}
		return nil
	}
	switch {
	case string(next) != scheduleNextPurge, scheduler == "", scheduler == subject, !subjects.ValidLiteral(scheduler):
		return errScheduler()
	case !allowed:
		return errSchedulesDisabled()
	}
	if last, err := st.log.LastBySubject(scheduler); err == nil && header.Value(last.Header, hdrSchedule) == nil {
		return errScheduler()
	}
	return nil
}
