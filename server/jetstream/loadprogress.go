package jetstream

import (
	"log/slog"
	"sync"
	"time"
)

// loadProgressEvery is how often a long store recovery is reported.
const loadProgressEvery = 5 * time.Second

// loadProgress reports a long store recovery at start-up: streams done of
// the total, the stream being opened, messages loaded and their rate. A
// recovery quicker than the interval logs nothing more than before. Safe
// for concurrent use: loadStreams reports streams while a ticker logs.
type loadProgress struct {
	log   *slog.Logger
	now   func() time.Time
	total int
	start time.Time

	mu      sync.Mutex // guards the fields below
	done    int
	msgs    uint64
	current string // the stream being opened
	logged  bool   // a progress line went out
}

func newLoadProgress(log *slog.Logger, now func() time.Time, total int) *loadProgress {
	return &loadProgress{log: log, now: now, total: total, start: now()}
}

// opening records the stream being opened.
func (p *loadProgress) opening(name string) {
	p.mu.Lock()
	p.current = name
	p.mu.Unlock()
}

// streamDone counts a stream opened (or found damaged) with msgs messages.
func (p *loadProgress) streamDone(msgs uint64) {
	p.mu.Lock()
	p.done++
	p.msgs += msgs
	p.current = ""
	p.mu.Unlock()
}

// report logs where the recovery is.
func (p *loadProgress) report() {
	p.mu.Lock()
	done, msgs, current := p.done, p.msgs, p.current
	p.logged = true
	p.mu.Unlock()
	elapsed := p.now().Sub(p.start)
	p.log.Info("recovering streams", "streams_done", done, "streams_total", p.total, "opening", current,
		"messages", msgs, "msgs_per_sec", perSecond(msgs, elapsed), "elapsed", elapsed.Round(time.Millisecond))
}

// finish logs the totals, if the recovery was long enough to report on.
func (p *loadProgress) finish() {
	p.mu.Lock()
	logged, done, msgs := p.logged, p.done, p.msgs
	p.mu.Unlock()
	elapsed := p.now().Sub(p.start)
	if !logged && elapsed < loadProgressEvery {
		return
	}
	p.log.Info("streams recovered", "streams", done, "messages", msgs,
		"msgs_per_sec", perSecond(msgs, elapsed), "elapsed", elapsed.Round(time.Millisecond))
}

// run reports every interval until stop is closed; loadStreams owns it.
func (p *loadProgress) run(every time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.report()
		case <-stop:
			return
		}
	}
}

func perSecond(n uint64, d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(float64(n) / d.Seconds())
}
