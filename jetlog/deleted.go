package jetlog

// Deleted lists the seqs from the first live message to the last seq
// assigned that hold no message (deleted, expired, or skipped), ascending,
// at most limit of them: stream info's deleted_details. It walks the
// sections, loading those it needs.
func (l *Log) Deleted(limit int) []uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	c := &l.cat
	if c.msgs == 0 || limit <= 0 {
		return nil
	}
	var out []uint64
	add := func(from, to uint64) bool { // inclusive
		for s := from; s <= to; s++ {
			if len(out) == limit {
				return false
			}
			out = append(out, s)
		}
		return true
	}
	next := c.base // the next seq not yet accounted for
	for _, seg := range c.segs[c.segFrom(c.base):] {
		if seg.slots() == 0 {
			continue
		}
		if seg.first > next && !add(next, seg.first-1) {
			return out
		}
		c.load(seg)
		for i := range seg.metas {
			seq := seg.first + uint64(i)
			if seq < c.base {
				continue
			}
			if seg.metas[i].subj == nil && !add(seq, seq) {
				return out
			}
		}
		next = max(next, seg.end())
	}
	if next <= c.last {
		add(next, c.last)
	}
	return out
}
