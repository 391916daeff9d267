package jetstream

import (
	"container/heap"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/header"
)

// Message schedules (allow_msg_schedules), as nats-server 2.12+ has them.
// A message carrying Nats-Schedule and Nats-Schedule-Target is stored on
// its own subject as that subject's schedule (a rollup: a newer schedule
// on the subject replaces it, and so does a plain message). When it is
// due the stream stores a copy on the target through its publish path,
// with Nats-Scheduler naming the schedule's subject and
// Nats-Schedule-Next saying when it fires again, or "purge" for an @at
// schedule, whose own message is then purged.
//
// Nothing about schedules is stored beside the messages: the scheduler
// is rebuilt at open by replaying the stream's live messages through the
// same hook that sees them stored (scheduler.stored), so the produced
// messages' Nats-Schedule-Next restore when each schedule fires next. A
// schedule that came due while the server was down fires once after it
// starts; a repeating one then skips ahead rather than firing for every
// missed time. A schedule fires for its owner, the user who published it
// (recorded in the message itself), and only within that user's rights
// as they are when it is due (scheduleowner.go).
//
// The scheduler is one heap of due times per stream and one timer armed
// for the earliest (time.AfterFunc: no goroutine while it waits), never
// sooner than scheduleMinDelay, as the reference, so that a burst of
// schedules does not fire the timer per message. A stream without
// schedules has no scheduler at all.

// scheduleMinDelay is the shortest wait the timer is armed for (the
// reference's), except to apply a purge.
const scheduleMinDelay = 250 * time.Millisecond

// inFlight is the due time of a schedule being fired: it sorts last, so
// it is not fired twice, until the firing settles it.
const inFlight = math.MaxInt64

// scheduleEntry is one subject's schedule: its message's seq and when
// it fires next (unix ns).
type scheduleEntry struct {
	subject string
	seq     uint64
	at      int64
	index   int // in the heap
	// refused is set while its owner's rights refuse its firings
	// (scheduleowner.go), so that is logged once.
	refused bool
}

// schedulePurge asks for the messages of subject below seq to be purged:
// an @at schedule that fired, or one a client cancelled.
type schedulePurge struct {
	subject string
	below   uint64
}

// scheduler holds a stream's schedules. It is safe for concurrent use:
// the stream's append completions feed it (stored), and its timer runs
// fire and purge, which store and purge through the stream.
type scheduler struct {
	now func() time.Time
	// fire produces the message of a due schedule and returns when the
	// schedule fires next, or false to drop it.
	fire func(e scheduleEntry, now time.Time) (time.Time, bool)
	// purge removes a fired or cancelled schedule's message.
	purge func(p schedulePurge)
	// manual leaves the timer unarmed: tests call run themselves.
	manual bool
	// failing is set while produced messages fail to store, so that the
	// failure is logged once (stream.reportScheduled).
	failing atomic.Bool

	mu      sync.Mutex // guards the fields below
	entries map[string]*scheduleEntry
	due     scheduleHeap
	// replaying is set while the stream's messages are replayed at open:
	// a produced @at's purge is then queued only if its schedule is still
	// held (every earlier one was applied before the restart).
	replaying bool
	purges    []schedulePurge
	timer     *time.Timer
	armedAt   int64 // unix ns the timer is armed for; 0 when it is not
	running   bool  // a run is firing (without the lock)
	// rightsGen counts rightsChanged calls, so that an @at held while
	// the rights changed under its firing is tried again.
	rightsGen uint64
	closed    bool
	idle      sync.Cond // broadcast when a run ends
}

func newScheduler(now func() time.Time, fire func(scheduleEntry, time.Time) (time.Time, bool), purge func(schedulePurge)) *scheduler {
	s := &scheduler{now: now, fire: fire, purge: purge, entries: map[string]*scheduleEntry{}}
	s.idle.L = &s.mu
	return s
}

// stored is told of every message the stream stores, in seq order (at
// open, of every live message): a schedule is added or replaces the
// subject's; a plain message on a scheduled subject cancels it; a
// produced message moves its schedule to the time it names or, with
// "purge", removes it and queues the purge of its message.
func (s *scheduler) stored(subject string, hdr []byte, seq uint64, ts int64) {
	scheduler := header.Value(hdr, hdrScheduler)
	at, isSchedule := storedSchedule(hdr, ts, s.now)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case isSchedule:
		s.addLocked(subject, seq, at)
	case scheduler == nil:
		s.removeLocked(subject)
	}
	if next := header.Value(hdr, hdrScheduleNext); next != nil && scheduler != nil {
		if string(next) == scheduleNextPurge {
			if _, held := s.entries[string(scheduler)]; held || !s.replaying {
				s.purges = append(s.purges, schedulePurge{subject: string(scheduler), below: seq})
			}
			s.removeLocked(string(scheduler))
		} else if t, err := time.Parse(time.RFC3339Nano, string(next)); err == nil {
			s.moveLocked(string(scheduler), t.UnixNano())
		}
	}
	s.armLocked()
}

// storedSchedule is when a stored message's schedule fires first, if it
// is one (its headers were checked when it was published).
func storedSchedule(hdr []byte, ts int64, now func() time.Time) (int64, bool) {
	if header.Value(hdr, hdrSchedule) == nil {
		return 0, false
	}
	p, e := scheduleOf(hdr)
	if e != nil {
		return 0, false
	}
	next, _, ok := p.next(time.Unix(0, ts), now())
	if !ok || next.IsZero() {
		return 0, false
	}
	return next.UnixNano(), true
}

func (s *scheduler) addLocked(subject string, seq uint64, at int64) {
	if e, ok := s.entries[subject]; ok {
		e.seq, e.at, e.refused = seq, at, false
		heap.Fix(&s.due, e.index)
		return
	}
	e := &scheduleEntry{subject: subject, seq: seq, at: at}
	s.entries[subject] = e
	heap.Push(&s.due, e)
}

func (s *scheduler) moveLocked(subject string, at int64) {
	if e, ok := s.entries[subject]; ok {
		e.at = at
		heap.Fix(&s.due, e.index)
	}
}

func (s *scheduler) removeLocked(subject string) {
	if e, ok := s.entries[subject]; ok {
		heap.Remove(&s.due, e.index)
		delete(s.entries, subject)
	}
}

// armLocked arms the timer for the earliest due schedule (or at once for
// a queued purge), unless it is already armed as early or a run, which
// arms it when it ends, is going.
func (s *scheduler) armLocked() {
	if s.closed || s.running || s.manual || s.replaying {
		return
	}
	now := s.now().UnixNano()
	var delay time.Duration
	switch {
	case len(s.purges) > 0:
	case len(s.due) > 0 && s.due[0].at < scheduleHeld: // not all held or in flight
		delay = max(time.Duration(s.due[0].at-now), scheduleMinDelay)
	default:
		if s.timer != nil {
			s.timer.Stop()
		}
		s.armedAt = 0
		return
	}
	at := now + int64(delay)
	if s.armedAt != 0 && s.armedAt <= at {
		return
	}
	s.armedAt = at
	if s.timer == nil {
		s.timer = time.AfterFunc(delay, s.run)
	} else {
		s.timer.Reset(delay)
	}
}

// run is the timer's: it applies the queued purges, fires what is due
// (without the lock: firing stores through the stream, whose completion
// calls stored), settles each firing and arms the timer again.
func (s *scheduler) run() {
	s.mu.Lock()
	if s.closed || s.running {
		s.mu.Unlock()
		return
	}
	s.running, s.armedAt = true, 0
	rightsGen := s.rightsGen
	purges := s.purges
	s.purges = nil
	now := s.now()
	var due []scheduleEntry
	for len(s.due) > 0 && s.due[0].at <= now.UnixNano() {
		e := s.due[0]
		due = append(due, *e)
		e.at = inFlight
		heap.Fix(&s.due, 0)
	}
	s.mu.Unlock()

	for _, p := range purges {
		s.purge(p)
	}
	type outcome struct {
		next time.Time
		keep bool
	}
	outcomes := make([]outcome, len(due))
	for i, e := range due {
		outcomes[i].next, outcomes[i].keep = s.fire(e, now)
	}

	s.mu.Lock()
	for i, e := range due {
		cur, ok := s.entries[e.subject]
		if !ok || cur.seq != e.seq {
			continue // replaced or cancelled while it fired
		}
		if outcomes[i].keep {
			cur.at = outcomes[i].next.UnixNano()
			if cur.at == scheduleHeld && s.rightsGen != rightsGen {
				cur.at = s.now().UnixNano() // the rights changed while it was refused
			}
			heap.Fix(&s.due, cur.index)
		} else {
			s.removeLocked(e.subject)
		}
	}
	s.running = false
	s.idle.Broadcast()
	s.armLocked()
	s.mu.Unlock()
}

// close stops the timer and waits for a run in progress, so that nothing
// fires into a closed log.
func (s *scheduler) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	for s.running {
		s.idle.Wait()
	}
}

// setReplaying marks the replay of the stored messages at open; the
// timer is armed once it ends, when the stream can see what it fires.
func (s *scheduler) setReplaying(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaying = on
	s.armLocked()
}

// pending returns how many schedules are held (for tests and info).
func (s *scheduler) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// scheduleHeap orders entries by due time (container/heap).
type scheduleHeap []*scheduleEntry

func (h scheduleHeap) Len() int           { return len(h) }
func (h scheduleHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h scheduleHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *scheduleHeap) Push(x any) {
	e := x.(*scheduleEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *scheduleHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
