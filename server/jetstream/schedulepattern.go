package jetstream

import (
	"strings"
	"time"
)

// schedulePattern is a parsed Nats-Schedule value. The reference accepts
// "@at <RFC 3339 time>" (fires once), "@every <Go duration of at least a
// second>", the cron macros @yearly (@annually), @monthly, @weekly,
// @daily (@midnight) and @hourly, and six-field cron expressions
// (schedulecron.go). A Nats-Schedule-Time-Zone applies to cron only.
type schedulePattern struct {
	at    time.Time     // @at
	every time.Duration // @every
	cron  cronSpec      // otherwise
	loc   *time.Location
	kind  scheduleKind
}

type scheduleKind uint8

const (
	scheduleAt scheduleKind = iota + 1
	scheduleEvery
	scheduleCron
)

// cronMacro expands the reference's named cron schedules.
func cronMacro(v string) (string, bool) {
	switch v {
	case "@yearly", "@annually":
		return "0 0 0 1 1 *", true
	case "@monthly":
		return "0 0 0 1 * *", true
	case "@weekly":
		return "0 0 0 * * 0", true
	case "@daily", "@midnight":
		return "0 0 0 * * *", true
	case "@hourly":
		return "0 0 * * * *", true
	}
	return v, false
}

// parseSchedulePattern reads a Nats-Schedule value; loc is the time zone
// header's, nil without one.
func parseSchedulePattern(v string, loc *time.Location) (schedulePattern, bool) {
	if rest, ok := strings.CutPrefix(v, "@at "); ok {
		t, err := time.Parse(time.RFC3339, rest)
		return schedulePattern{at: t, kind: scheduleAt}, err == nil && loc == nil
	}
	if rest, ok := strings.CutPrefix(v, "@every "); ok {
		d, err := time.ParseDuration(rest)
		return schedulePattern{every: d, kind: scheduleEvery}, err == nil && d >= time.Second && loc == nil
	}
	v, _ = cronMacro(v)
	spec, err := parseCron(v)
	if err != nil {
		return schedulePattern{}, false
	}
	if loc == nil {
		loc = time.UTC
	}
	return schedulePattern{cron: spec, loc: loc, kind: scheduleCron}, true
}

// next is when the schedule fires after the firing (or the store) at
// from, and whether it repeats. A repeating schedule that fell behind
// now (after a restart, or a late timer) fires once, not once per missed
// firing: the reference's skip-ahead. ok is false for a cron pattern
// with no firing ahead.
func (p schedulePattern) next(from, now time.Time) (next time.Time, repeats, ok bool) {
	switch p.kind {
	case scheduleAt:
		return p.at, false, true
	case scheduleEvery:
		next = from.UTC().Round(time.Second).Add(p.every)
		if next.Before(now) {
			next = now.UTC().Round(time.Second).Add(p.every)
		}
		return next, true, true
	case scheduleCron:
		next, err := p.cron.next(from, p.loc)
		if err == nil && next.Before(now) {
			next, err = p.cron.next(now.Round(time.Second), p.loc)
		}
		return next, true, err == nil
	}
	return time.Time{}, false, false
}
