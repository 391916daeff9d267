package jetlog

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
		for cfg.MaxBytes > 0 && l.accounted(c.bytes, c.msgs) > uint64(cfg.MaxBytes) {
			if !c.remove(c.base) {
				break
			}
		}
	}
	if c.base != before {
		t.floor = c.first()
	}
}

// expire runs in the appender. Removals are journaled lazily: recovery
// would expire the same messages again.
func (l *Log) expire() uint64 {
	now := l.opts.Now()
	l.ap.dd.expire(now.UnixNano())
	n := l.expireTTLs(now.UnixNano())
	if l.cfg.MaxAge <= 0 {
		return n
	}
	cut := now.Add(-l.cfg.MaxAge).UnixNano()
	if _, ts, ok := l.cat.oldest(); !ok || ts >= cut {
		return n // the common case, without the lock
	}
	l.cat.loadAt(l.cat.base) // not under the lock
	l.mu.Lock()
	aged, emptied := l.expireLocked(cut)
	dead := l.detachDeadLocked()
	l.mu.Unlock()
	l.removeSegments(dead)
	l.reportEmptied(emptied)
	return n + aged
}

// expireLocked removes the messages stored before cut, but those with a
// Nats-TTL of "never", and returns how many and, with delete markers on,
// the subjects that lost their last message.
func (l *Log) expireLocked(cut int64) (uint64, []string) {
	var n uint64
	var emptied []string
	never := l.ap.ttl.never
	if len(never) == 0 && l.cfg.SubjectDeleteMarkerTTL <= 0 {
		// The common case: the oldest messages go, front first.
		for {
			seq, ts, ok := l.cat.oldest()
			if !ok || ts >= cut || !l.cat.remove(seq) {
				break
			}
			n++
		}
	} else {
		// Past messages that never expire, or noting the subjects that
		// need a delete marker: one at a time, journaled by seq.
		for from := l.cat.first(); ; {
			seq, ts := l.cat.nextLive(from)
			if seq > l.cat.last || ts >= cut {
				break
			}
			from = seq + 1
			if _, keep := never[seq]; keep {
				continue
			}
			if !l.expireSeqLocked(seq, &emptied) {
				break
			}
			n++
		}
	}
	if n > 0 {
		l.ap.tomb.floor = l.cat.first()
	}
	return n, emptied
}
