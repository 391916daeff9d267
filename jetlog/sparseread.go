package jetlog

// A consumer filtered to a subject that is rare in its segment (one
// message among hundreds of thousands of other subjects) would otherwise
// load the whole section, a meta per slot and a seq list per subject,
// to read one record. sparseNext reads that record's location straight
// from the segment's index file instead and leaves the section unloaded:
// the index is read and decoded once, but nothing is kept.

// sparseNext returns the first message at or after from matching the
// one literal filter fs, when the catalog's summaries alone say where it is
// and its section is unloaded and holds no other message of its subject.
// handled is false when that does not apply (or the index cannot be
// used); the caller then takes the general path, which loads the section.
func (l *Log) sparseNext(from uint64, fs filterSet) (msg Msg, handled bool, err error) {
	if len(fs) != 1 || fs.hasWildcard() {
		// Several filters are usually all read: their first messages
		// share sections, so loading each once beats a pass over its
		// index per message (measured: 100 filters, 1.4 s against 0.9 s).
		return Msg{}, false, nil
	}
	l.mu.RLock()
	c := &l.cat
	if l.closed || c.msgs == 0 {
		l.mu.RUnlock()
		return Msg{}, false, nil
	}
	from = max(from, c.base)
	var best *subjectState
	for i := range fs {
		s, ok := c.subjects[fs[i].pattern]
		if fs[i].kind != filterLiteral || !ok || s.count == 0 {
			continue
		}
		if from > s.first {
			// The answer is inside the subject's range: only its sections'
			// seq lists know where, so leave it to the general path.
			l.mu.RUnlock()
			return Msg{}, false, nil
		}
		if best == nil || s.first < best.first {
			best = s
		}
	}
	if best == nil {
		l.mu.RUnlock()
		return Msg{}, false, nil
	}
	seq := best.first // live by definition
	i := c.segIndex(seq)
	if i < 0 {
		l.mu.RUnlock()
		return Msg{}, false, nil
	}
	seg := c.segs[i]
	if n, known := seg.subjectCount(best); seg.loaded.Load() || !seg.sealed.Load() || !known || n != 1 || seg.indexed < 0 {
		l.mu.RUnlock()
		return Msg{}, false, nil
	}
	indexed, subject := seg.indexed, best.name
	seg.acquire() // keeps the file open
	l.prefetches.Add(1)
	l.mu.RUnlock()
	defer l.prefetches.Done()
	defer seg.done() //nolint:errcheck // read-only reference
	off, size, ok := l.indexEntry(seg, indexed, seq)
	if !ok {
		return Msg{}, false, nil
	}
	msg, err = l.readMsg(seg, off, size, make([]byte, size))
	if err == nil && (msg.Seq != seq || msg.Subject != subject) {
		// The index disagrees with the record: let the general path,
		// which checks the index against the summary, deal with it.
		return Msg{}, false, nil
	}
	return msg, true, err
}

// indexEntry returns where the message record of seq is in seg, from the
// segment's index file, which must describe indexed bytes of it; false
// when the index is missing, damaged or does not list seq.
func (l *Log) indexEntry(seg *segment, indexed int64, seq uint64) (off int64, size uint32, ok bool) {
	data, err := readSealed(l.fs, l.seal, segPath(l.dir, idxName(seg.id)))
	if err != nil {
		return 0, 0, false
	}
	segSize, count, valid := checkIndex(data)
	if !valid || segSize != indexed {
		return 0, 0, false
	}
	found := false
	whole := walkEntries(data, segSize, count, func(e *entry) {
		if !found && e.kind == kindMsg && e.seq == seq {
			off, size, found = e.off, e.size, true
		}
	})
	return off, size, whole && found
}
