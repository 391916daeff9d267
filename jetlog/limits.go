package jetlog

import (
	"fmt"
	"math"
	"path"
	"slices"
	"time"
)

// enforceLimits applies the discard-old limits after an append and queues
// the removals for the next tombstone. touched lists the subjects that got
// messages (nil: check every subject). l.mu is held.
func (l *Log) enforceLimits(touched []*subjectState) {
	cfg := &l.cfg
	c := &l.cat
	t := &l.ap.tomb
	before := c.base
	if cfg.MaxMsgsPerSubject > 0 {
		check := func(s *subjectState) {
			for s.count > uint64(cfg.MaxMsgsPerSubject) {
				seq := s.first
				if !c.remove(seq) {
					return // a summary out of step with its sections: recount fixes it
				}
				t.seqs = append(t.seqs, seq)
			}
		}
		if touched == nil {
			for _, s := range c.subjects {
				check(s)
			}
		} else {
			for _, s := range touched {
				check(s)
			}
		}
	}
	if cfg.Discard == DiscardOld || touched == nil {
		for cfg.MaxMsgs > 0 && c.msgs > uint64(cfg.MaxMsgs) {
			if !c.remove(c.base) {
				break // see above
			}
		}
		for cfg.MaxBytes > 0 && c.bytes > uint64(cfg.MaxBytes) {
			if !c.remove(c.base) {
				break
			}
		}
	}
	if c.base != before {
		t.floor = c.first()
	}
}

// Expire removes the messages older than MaxAge now and returns how many.
// The background expiry calls it too; callers rarely need to.
func (l *Log) Expire() (uint64, error) {
	r := l.getReq()
	defer l.putReq(r)
	r.op = opExpire
	if err := l.send(r); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// expire runs in the appender. Removals are journaled lazily: recovery
// would expire the same messages again.
func (l *Log) expire() uint64 {
	now := l.opts.Now()
	l.ap.dd.expire(now.UnixNano())
	if l.cfg.MaxAge <= 0 {
		return 0
	}
	cut := now.Add(-l.cfg.MaxAge).UnixNano()
	if _, ts, ok := l.cat.oldest(); !ok || ts >= cut {
		return 0 // the common case, without the lock
	}
	l.cat.loadAt(l.cat.base) // not under the lock
	l.mu.Lock()
	n := l.expireLocked(cut)
	dead := l.detachDeadLocked()
	l.mu.Unlock()
	l.removeSegments(dead)
	return n
}

func (l *Log) expireLocked(cut int64) uint64 {
	var n uint64
	for {
		seq, ts, ok := l.cat.oldest()
		if !ok || ts >= cut || !l.cat.remove(seq) {
			break
		}
		n++
	}
	if n > 0 {
		l.ap.tomb.floor = l.cat.first()
	}
	return n
}

// PurgeOptions selects what Purge removes. The zero value removes all.
type PurgeOptions struct {
	Subject string // only messages matching this filter (wildcards allowed)
	Seq     uint64 // only messages with a seq below this one (0: no bound)
	Keep    uint64 // keep the newest Keep of the selected messages
}

// Purge removes messages and returns how many. It is journaled and, in
// DurabilityAlways, synced before it returns.
func (l *Log) Purge(opts PurgeOptions) (uint64, error) {
	r := l.getReq()
	defer l.putReq(r)
	r.op = opPurge
	r.purge = opts
	if err := l.send(r); err != nil {
		return 0, err
	}
	return r.n, r.err
}

func (l *Log) doPurge(p PurgeOptions) (uint64, error) {
	if l.fatal != nil {
		return 0, l.fatal
	}
	c := &l.cat
	floor := uint64(0)
	var list []uint64
	if matchesAll(p.Subject) {
		// Unfiltered: everything below a floor.
		floor = c.last + 1
		if p.Seq > 0 {
			floor = min(floor, p.Seq)
		}
		if p.Keep > 0 {
			if p.Keep >= c.msgs {
				floor = 0
			} else {
				floor = min(floor, c.newest(p.Keep))
			}
		}
	} else {
		var all []uint64
		f := newMatcher(p.Subject)
		for name, s := range c.subjects {
			if f.matches(name) {
				all = append(all, c.subjectSeqs(s)...)
			}
		}
		slices.Sort(all)
		cut := uint64(math.MaxUint64) // remove seqs below cut
		if p.Seq > 0 {
			cut = p.Seq
		}
		if p.Keep > 0 {
			if uint64(len(all)) <= p.Keep {
				return 0, nil
			}
			cut = min(cut, all[len(all)-int(p.Keep)])
		}
		i, _ := slices.BinarySearch(all, cut)
		list = all[:i]
	}
	n := c.msgs - c.countFrom(floor) + uint64(len(list))
	if n == 0 {
		return 0, nil
	}
	emptied := n == c.msgs
	if emptied && l.active().size > 0 {
		// Start a fresh segment so every old one can be removed.
		if err := l.roll(); err != nil {
			return 0, err
		}
	}
	t := &l.ap.tomb
	t.floor = max(t.floor, floor)
	t.seqs = append(t.seqs, list...)
	if err := l.flushTomb(l.durability() == DurabilityAlways); err != nil {
		t.seqs = t.seqs[:len(t.seqs)-len(list)]
		return 0, err
	}
	l.ap.lastIDKnown = false // the reference reloads it from the newest message left
	l.mu.Lock()
	c.removeBelow(floor)
	for _, seq := range list {
		c.remove(seq)
	}
	dead := l.detachDeadLocked()
	if !l.ap.dirty {
		l.durable.Store(c.last)
	}
	l.mu.Unlock()
	l.removeSegments(dead)
	return n, nil
}

// UpdateConfig changes the stream's limits and modes. The new config is
// stored, the limits applied (discard old) and the removals journaled.
func (l *Log) UpdateConfig(cfg StreamConfig) error {
	r := l.getReq()
	defer l.putReq(r)
	r.op = opConfig
	r.cfg = cfg
	if err := l.send(r); err != nil {
		return err
	}
	return r.err
}

func (l *Log) doUpdateConfig(cfg StreamConfig) error {
	cfg = cfg.Normalized()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Storage != l.cfg.Storage {
		return fmt.Errorf("jetlog: config storage %q: %w", cfg.Storage, ErrBadConfig)
	}
	var created time.Time
	if !l.memory {
		if _, c, err := LoadConfig(l.fs, l.dir); err == nil {
			created = c
		}
		if err := writeChecked(l.fs, path.Join(l.dir, metaFile), streamMeta{Version: 1, Config: cfg, Created: created}); err != nil {
			return fmt.Errorf("jetlog: store config: %w", err)
		}
	}
	l.mu.Lock()
	l.cfg = cfg
	l.enforceLimits(nil)
	if cfg.MaxAge > 0 {
		l.expireLocked(l.opts.Now().Add(-cfg.MaxAge).UnixNano())
	}
	dead := l.detachDeadLocked()
	l.mu.Unlock()
	l.ap.dd.window = int64(cfg.DuplicateWindow)
	l.removeSegments(dead)
	return l.flushTomb(true)
}
