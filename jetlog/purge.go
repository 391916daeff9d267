package jetlog

import (
	"math"
	"slices"
)

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
