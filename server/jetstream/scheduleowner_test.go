package jetstream

import (
	"testing"
	"time"

	"github.com/bus-dev/bus/header"
)

// The owner header is the server's: set over whatever a client sent on
// a schedule, left alone on other messages, and kept when the server acts
// for the operator ("").
func TestOwnedSchedule(t *testing.T) {
	schedule := []byte("NATS/1.0\r\nNats-Schedule: @every 1s\r\nbus-schedule-owner: admin\r\nBus-Schedule-Owner:  root \r\n\r\n")
	plain := []byte("NATS/1.0\r\nBus-Schedule-Owner: admin\r\n\r\n")
	for _, c := range []struct {
		name  string
		hdr   []byte
		owner string
		want  []string
	}{
		{"a client's forged owners are replaced", schedule, "eve", []string{"eve"}},
		{"the operator keeps what the message names", schedule, "", []string{"admin", "root"}},
		{"not a schedule: untouched", plain, "eve", []string{"admin"}},
		{"no headers", nil, "eve", nil},
	} {
		got := ownedSchedule(c.hdr, c.owner)
		var owners []string
		if len(got) > 0 {
			for key, line := range header.Lines(got) {
				if key != nil && isScheduleOwner(key) {
					owners = append(owners, string(header.LineValue(line)))
				}
			}
		}
		if len(owners) != len(c.want) {
			t.Errorf("%s: owners %q, want %q", c.name, owners, c.want)
			continue
		}
		for i := range owners {
			if owners[i] != c.want[i] {
				t.Errorf("%s: owners %q, want %q", c.name, owners, c.want)
			}
		}
		if c.hdr != nil && header.Value(got, hdrSchedule) == nil && header.Value(c.hdr, hdrSchedule) != nil {
			t.Errorf("%s: lost Nats-Schedule: %q", c.name, got)
		}
	}
}

// An @at its owner's rights refused is held, not fired again by later
// runs, and due again once the rights change, also when they change
// while it is being refused.
func TestSchedulerHoldsRefusedAtUntilRightsChange(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC) // only the test's goroutine
	var fired int
	refuse := true
	var during func()
	s := newScheduler(func() time.Time { return now }, func(scheduleEntry, time.Time) (time.Time, bool) {
		fired++
		if during != nil {
			during()
			during = nil
		}
		if refuse {
			return time.Unix(0, scheduleHeld), true
		}
		return time.Time{}, false
	}, func(schedulePurge) {})
	s.manual = true
	t.Cleanup(s.close)
	firings := func() int { n := fired; fired = 0; return n }

	s.stored("at", scheduleHeader("@at 2025-03-14T10:00:00Z", "out"), 1, now.UnixNano())
	s.run()
	if n := firings(); n != 1 {
		t.Fatalf("fired %d times, want once", n)
	}
	now = now.Add(time.Hour)
	s.run()
	if n := firings(); n != 0 {
		t.Fatalf("a held @at fired again (%d) before the rights changed", n)
	}
	s.rightsChanged()
	during = s.rightsChanged // refused under the old rights as they change again
	s.run()
	s.run()
	if n := firings(); n != 2 {
		t.Fatalf("fired %d times, want 2: once for the change, once for the change during it", n)
	}
	refuse = false
	s.rightsChanged()
	s.run()
	if n := firings(); n != 1 || s.pending() != 0 {
		t.Fatalf("fired %d times with %d pending, want once and done", n, s.pending())
	}
}
