package jetstream

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeSchedules drives a scheduler with a fake clock, recording what it
// fires and purges; run is called by the test (the real timer, armed for
// the fake clock's distances, is never armed).
type fakeSchedules struct {
	mu     sync.Mutex
	now    time.Time
	fired  []scheduleEntry
	purged []schedulePurge
	next   func(e scheduleEntry) (time.Time, bool)
}

func newFakeSchedules(t *testing.T) (*fakeSchedules, *scheduler) {
	f := &fakeSchedules{now: time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)}
	s := newScheduler(f.clock, func(e scheduleEntry, _ time.Time) (time.Time, bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.fired = append(f.fired, e)
		if f.next != nil {
			return f.next(e)
		}
		return time.Time{}, false
	}, func(p schedulePurge) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.purged = append(f.purged, p)
	})
	s.manual = true
	t.Cleanup(s.close)
	return f, s
}

func (f *fakeSchedules) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeSchedules) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fakeSchedules) firedSubjects() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.fired {
		out = append(out, e.subject)
	}
	f.fired = nil
	return out
}

func scheduleHeader(pattern, target string) []byte {
	return statusHeader("", hdrSchedule, pattern, hdrScheduleTarget, target, "Nats-Rollup", "sub")
}

func TestSchedulerKeepsOneSchedulePerSubject(t *testing.T) {
	t.Parallel()
	f, s := newFakeSchedules(t)
	ts := f.clock().UnixNano()
	s.stored("a", scheduleHeader("@every 1m", "out"), 1, ts)
	s.stored("a", scheduleHeader("@every 2m", "out"), 2, ts)
	s.stored("b", scheduleHeader("@every 1m", "out"), 3, ts)
	if n := s.pending(); n != 2 {
		t.Fatalf("pending %d, want 2 (the newer schedule replaces the older)", n)
	}
	s.stored("b", nil, 4, ts) // a plain message cancels
	s.stored("out", statusHeader("", hdrScheduler, "a", hdrScheduleNext, "2025-03-14T11:00:00Z"), 5, ts)
	if n := s.pending(); n != 1 {
		t.Fatalf("pending %d, want 1", n)
	}
	f.advance(90 * time.Second)
	s.run()
	if got := f.firedSubjects(); len(got) != 0 {
		t.Fatalf("fired %v before the time a produced message moved it to", got)
	}
	f.advance(time.Hour)
	s.run()
	if got := f.firedSubjects(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("fired %v, want [a]", got)
	}
	if n := s.pending(); n != 0 {
		t.Fatalf("pending %d after a firing that ends it", n)
	}
}

func TestSchedulerRepeatsAndPurges(t *testing.T) {
	t.Parallel()
	f, s := newFakeSchedules(t)
	f.next = func(e scheduleEntry) (time.Time, bool) {
		return time.Unix(0, e.at).Add(3 * time.Minute), e.subject == "every"
	}
	ts := f.clock().UnixNano()
	s.stored("every", scheduleHeader("@every 1m", "out"), 1, ts)
	s.stored("at", scheduleHeader("@at 2025-03-14T10:00:30Z", "out"), 2, ts)
	f.advance(2 * time.Minute)
	s.run()
	if got := f.firedSubjects(); !slices.Equal(got, []string{"at", "every"}) {
		t.Fatalf("fired %v, want the earlier first", got)
	}
	s.run()
	if got := f.firedSubjects(); len(got) != 0 {
		t.Fatalf("fired %v again before its next time", got)
	}
	f.advance(2 * time.Minute)
	s.run()
	if got := f.firedSubjects(); !slices.Equal(got, []string{"every"}) {
		t.Fatalf("fired %v, want [every] (at is done)", got)
	}
	// A produced message saying "purge" ends the schedule and purges it.
	s.stored("out", statusHeader("", hdrScheduler, "every", hdrScheduleNext, scheduleNextPurge), 9, ts)
	s.run()
	f.mu.Lock()
	purged := slices.Clone(f.purged)
	f.mu.Unlock()
	if !slices.Equal(purged, []schedulePurge{{subject: "every", below: 9}}) || s.pending() != 0 {
		t.Fatalf("purged %v, pending %d", purged, s.pending())
	}
}

func TestSchedulerFiresWithItsTimer(t *testing.T) {
	t.Parallel()
	fired := make(chan scheduleEntry, 1)
	s := newScheduler(time.Now, func(e scheduleEntry, _ time.Time) (time.Time, bool) {
		fired <- e
		return time.Time{}, false
	}, func(schedulePurge) {})
	defer s.close()
	s.stored("a", scheduleHeader("@at 2000-01-01T00:00:00Z", "out"), 7, time.Now().UnixNano())
	select {
	case e := <-fired:
		if e.subject != "a" || e.seq != 7 {
			t.Fatalf("fired %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a schedule due in the past did not fire")
	}
}

func TestSchedulerReplayQueuesOnlyPendingPurges(t *testing.T) {
	t.Parallel()
	f, s := newFakeSchedules(t)
	ts := f.clock().UnixNano()
	produced := statusHeader("", hdrScheduler, "at", hdrScheduleNext, scheduleNextPurge)
	s.setReplaying(true)
	s.stored("out", produced, 3, ts) // its schedule was purged before the restart
	s.stored("at", scheduleHeader("@at 2025-03-14T10:00:30Z", "out"), 5, ts)
	s.stored("out", produced, 6, ts) // fired, but the purge did not happen before the restart
	s.setReplaying(false)
	s.run()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.purged, []schedulePurge{{subject: "at", below: 6}}) || len(f.fired) != 0 {
		t.Fatalf("purged %v, fired %v", f.purged, f.fired)
	}
}
