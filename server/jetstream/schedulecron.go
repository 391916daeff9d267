package jetstream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cron expressions for Nats-Schedule, as the reference reads them: six
// fields separated by spaces, "second minute hour day-of-month month
// day-of-week". Each field is a comma-separated list of ranges: "*" or
// "?" (every value), "n", "n-m", each optionally with "/step"; "n/step"
// means "n-max/step". Months and weekdays may also be named by their
// first three letters ("jan", "mon"), in any case. Weekdays run 0-6 from
// Sunday. As in classic cron, when both day fields are restricted a day
// matches if either does, and when either is "*" both must.

// cronSpec is a parsed cron expression: for each field the set of values
// it fires on, bit i set for value i.
type cronSpec struct {
	second, minute, hour, dom, month, dow uint64
}

// cronAny is set in a field's bits when the field was written as "*" or
// "?" (with no step above 1): the day fields then combine with "and".
const cronAny = 1 << 63

// cronHorizon bounds the search for the next firing: a pattern with no
// firing within it ("0 0 0 30 2 *") is refused, as by the reference.
const cronHorizon = 5 // years

// The value names of the month and weekday fields, three letters each,
// in order from the field's first value.
const (
	monthNames   = "janfebmaraprmayjunjulaugsepoctnovdec"
	weekdayNames = "sunmontuewedthufrisat"
)

// cronBounds is one field's range of values and the names of its values.
type cronBounds struct {
	lo, hi uint
	names  string
}

// errCronNoFiring is a pattern that never fires within cronHorizon.
var errCronNoFiring = errors.New("cron: no firing within five years")

// parseCron reads a six-field cron expression.
func parseCron(pattern string) (cronSpec, error) {
	fields := strings.Fields(pattern)
	if len(fields) != 6 {
		return cronSpec{}, fmt.Errorf("cron: %q: want 6 fields, have %d", pattern, len(fields))
	}
	bounds := [6]cronBounds{{0, 59, ""}, {0, 59, ""}, {0, 23, ""}, {1, 31, ""}, {1, 12, monthNames}, {0, 6, weekdayNames}}
	var bits [6]uint64
	for i, f := range fields {
		b, err := parseCronField(f, bounds[i])
		if err != nil {
			return cronSpec{}, fmt.Errorf("cron: %q: %w", pattern, err)
		}
		bits[i] = b
	}
	return cronSpec{second: bits[0], minute: bits[1], hour: bits[2], dom: bits[3], month: bits[4], dow: bits[5]}, nil
}

// parseCronField reads a comma-separated list of ranges; empty list
// elements are skipped, as by the reference.
func parseCronField(field string, b cronBounds) (uint64, error) {
	var bits uint64
	for _, part := range strings.Split(field, ",") {
		if part == "" {
			continue
		}
		r, err := parseCronRange(part, b)
		if err != nil {
			return 0, err
		}
		bits |= r
	}
	return bits, nil
}

// parseCronRange reads "*", "?", "n" or "n-m", optionally with "/step".
func parseCronRange(expr string, b cronBounds) (uint64, error) {
	span, stepText, stepped := strings.Cut(expr, "/")
	if strings.Contains(stepText, "/") {
		return 0, fmt.Errorf("range %q: more than one step", expr)
	}
	bounds := strings.Split(span, "-")
	var lo, hi uint
	anyValue := bounds[0] == "*" || bounds[0] == "?"
	switch {
	case anyValue:
		lo, hi = b.lo, b.hi // what follows a "*-" is ignored, as by the reference
	case len(bounds) > 2:
		return 0, fmt.Errorf("range %q: more than one hyphen", expr)
	default:
		var err error
		if lo, err = cronValue(bounds[0], b.names); err != nil {
			return 0, err
		}
		hi = lo
		if len(bounds) == 2 {
			if hi, err = cronValue(bounds[1], b.names); err != nil {
				return 0, err
			}
		}
	}
	step := uint(1)
	if stepped {
		var err error
		if step, err = cronNumber(stepText); err != nil {
			return 0, err
		}
		if len(bounds) == 1 {
			hi = b.hi // "n/step" runs to the end of the field
		}
		if step > 1 {
			anyValue = false
		}
	}
	switch {
	case lo < b.lo || hi > b.hi:
		return 0, fmt.Errorf("range %q: outside %d-%d", expr, b.lo, b.hi)
	case lo > hi:
		return 0, fmt.Errorf("range %q: starts after its end", expr)
	case step == 0:
		return 0, fmt.Errorf("range %q: step of zero", expr)
	}
	var bits uint64
	for v := lo; v <= hi; v += step {
		bits |= 1 << v
	}
	if anyValue {
		bits |= cronAny
	}
	return bits, nil
}

// cronValue reads a number or, for a field with names, a name.
func cronValue(s string, names string) (uint, error) {
	first := uint(0)
	if names == monthNames {
		first = 1
	}
	for i := 0; len(s) == 3 && i+3 <= len(names); i += 3 {
		if strings.EqualFold(s, names[i:i+3]) {
			return first + uint(i/3), nil
		}
	}
	return cronNumber(s)
}

func cronNumber(s string) (uint, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("value %q: not a number", s)
	}
	return uint(n), nil
}

// next returns the first time after after (at least a second later, on a
// whole second) that the spec fires, in loc's wall clock.
func (c cronSpec) next(after time.Time, loc *time.Location) (time.Time, error) {
	t := after.In(loc).Truncate(time.Second).Add(time.Second)
	horizon := t.Year() + cronHorizon
	// Each step moves t to the start of the next unit of the first field
	// that does not match, then checks every field again from the top.
	for t.Year() <= horizon {
		switch {
		case !has(c.month, int(t.Month())):
			t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc).AddDate(0, 1, 0)
		case !c.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, 1)
		case !has(c.hour, t.Hour()):
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, loc).Add(time.Hour)
		case !has(c.minute, t.Minute()):
			t = t.Truncate(time.Minute).Add(time.Minute)
		case !has(c.second, t.Second()):
			t = t.Add(time.Second)
		default:
			return t, nil
		}
	}
	return time.Time{}, errCronNoFiring
}

// dayMatches applies the day-of-month and day-of-week fields together.
func (c cronSpec) dayMatches(t time.Time) bool {
	dom, dow := has(c.dom, t.Day()), has(c.dow, int(t.Weekday()))
	if c.dom&cronAny != 0 || c.dow&cronAny != 0 {
		return dom && dow
	}
	return dom || dow
}

func has(bits uint64, v int) bool { return bits&(1<<uint(v)) != 0 }
