package jetstream

import (
	"testing"
	"time"
)

// FuzzCron: any pattern either is refused or yields, after any time, a
// later whole second that matches every field, with no earlier matching
// second in between (checked by brute force when it is near). Seeds in
// testdata/fuzz/FuzzCron.
func FuzzCron(f *testing.F) {
	for _, p := range []string{"* * * * * *", "0 0 12 * jan-mar mon-fri", "*/7 3-9/2 * 1,15 * ?", "0 0 0 29 2 *", "@hourly"} {
		f.Add(p, int64(1741947630_500_000_000))
	}
	f.Fuzz(func(t *testing.T, pattern string, ts int64) {
		p, ok := parseSchedulePattern(pattern, nil)
		if !ok || p.kind != scheduleCron {
			return
		}
		ts = ts % (200 * 365 * 24 * int64(time.Hour)) // within a few centuries of 1970
		from := time.Unix(0, ts).UTC()
		next, err := p.cron.next(from, time.UTC)
		if err != nil {
			return
		}
		if !next.After(from) || next.Nanosecond() != 0 {
			t.Fatalf("%q after %v: %v", pattern, from, next)
		}
		if !cronMatches(p.cron, next) {
			t.Fatalf("%q after %v: %v does not match", pattern, from, next)
		}
		if next.Sub(from) > 2*time.Hour {
			return
		}
		for s := from.Truncate(time.Second).Add(time.Second); s.Before(next); s = s.Add(time.Second) {
			if cronMatches(p.cron, s) {
				t.Fatalf("%q after %v: %v, but %v matches before it", pattern, from, next, s)
			}
		}
	})
}

// cronMatches is the model: every field matches t.
func cronMatches(c cronSpec, t time.Time) bool {
	return has(c.second, t.Second()) && has(c.minute, t.Minute()) && has(c.hour, t.Hour()) &&
		has(c.month, int(t.Month())) && c.dayMatches(t)
}
