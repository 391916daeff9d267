package jetlog

import (
	"cmp"
	"slices"
)

// A consumer filtered to subjects that are rare in their segment (one
// message each among hundreds of thousands of other subjects) would
// otherwise load the whole section, a meta per slot and a seq list per
// subject, to read a few records: over a million distinct subjects that
// is about a second per 64 MiB segment. When the per-subject summaries
// alone say which seqs come next, sparseBatch reads their locations
// straight from the segment's index file instead and leaves the section
// unloaded: only the index blocks that hold them are read, when the
// segment's block directory is there (segblocks.go), else the whole index
// once per batch; nothing is kept.
// see BenchmarkManySubjectsRead, BenchmarkSparseNext

// sparseBatch returns up to limit messages at or after from matching the
// literal filters fs, in seq order, when the catalog's summaries alone say
// which seqs those are (from is at or before each filter subject's first
// message) and the first of them is in an unloaded section (sealed, or
// the active one as a clean Open leaves it) whose index file is trusted.
// It may return fewer than limit (it stops at the section's end, and
// after a subject with more messages, whose next one it does not know). handled is false when that does not apply (or the index cannot
// be used); the caller then takes the general path, which loads sections.
func (l *Log) sparseBatch(from uint64, fs filterSet, limit int) (msgs []Msg, handled bool, err error) {
	if fs.hasWildcard() || limit < 1 {
		return nil, false, nil
	}
	l.mu.RLock()
	c := &l.cat
	if l.closed || c.msgs == 0 {
		l.mu.RUnlock()
		return nil, false, nil
	}
	from = max(from, c.base)
	var buf [4]*subjectState
	next := buf[:0] // the subjects whose first message is still to come
	for i := range fs {
		s, ok := c.subjects[fs[i].pattern]
		if !ok || s.count == 0 || from > s.last || !fs.literalAt(i) {
			continue
		}
		if from > s.first {
			// The answer is inside the subject's range: only its sections'
			// seq lists know where, so leave it to the general path.
			l.mu.RUnlock()
			return nil, false, nil
		}
		next = append(next, s)
	}
	if len(next) == 0 {
		l.mu.RUnlock()
		return nil, false, nil
	}
	slices.SortFunc(next, func(a, b *subjectState) int { return cmp.Compare(a.first, b.first) })
	i := c.segIndex(next[0].first)
	if i < 0 {
		l.mu.RUnlock()
		return nil, false, nil
	}
	seg := c.segs[i]
	if seg.loaded.Load() || seg.indexed < 0 {
		l.mu.RUnlock()
		return nil, false, nil
	}
	// The subjects' first messages are the next ones in order up to the
	// first subject with more messages: its second may come before the
	// following subject's first.
	n := 0
	for n < len(next) && n < limit && next[n].first < seg.end() {
		n++
		if next[n-1].count > 1 {
			break
		}
	}
	want := make([]sparseWant, n)
	for k, s := range next[:n] {
		want[k] = sparseWant{seq: s.first, subject: s.name} // live by definition
	}
	indexed := seg.indexed
	seg.acquire() // keeps the file open
	l.prefetches.Add(1)
	l.mu.RUnlock()
	defer l.prefetches.Done()
	defer seg.done() //nolint:errcheck // read-only reference
	if dir, ok := l.readBlockDir(seg, indexed); ok && l.blockEntries(seg, dir, want) {
		l.blockReads.Add(1)
	} else if !l.indexEntries(seg, indexed, want) {
		return nil, false, nil
	}
	msgs = make([]Msg, 0, len(want))
	for _, w := range want {
		msg, err := l.readMsg(seg, w.off, w.size, make([]byte, w.size))
		if err != nil {
			return msgs, len(msgs) > 0, err
		}
		if msg.Seq != w.seq || msg.Subject != w.subject {
			// The index disagrees with the record: let the general path,
			// which checks the index against the summary, deal with it.
			return nil, false, nil
		}
		msgs = append(msgs, msg)
	}
	l.sparseReads.Add(1)
	return msgs, true, nil
}

// sparseWant is one message sparseBatch reads: what the summaries say
// (seq, subject) and what the index adds (off, size).
type sparseWant struct {
	seq     uint64
	subject string
	off     int64
	size    uint32
}

// indexEntries fills in where the message records of want (ascending
// seqs) are in seg, from the segment's index file, which must describe
// indexed bytes of it; false when the index is missing, damaged or does
// not list every seq.
func (l *Log) indexEntries(seg *segment, indexed int64, want []sparseWant) bool {
	data, err := readSealed(l.fs, l.seal, segPath(l.dir, idxName(seg.id)))
	if err != nil {
		return false
	}
	segSize, count, valid := checkIndex(data)
	if !valid || segSize != indexed {
		return false
	}
	k := 0 // entries ascend by seq, so one pass merges them with want
	missing := false
	whole := walkEntries(data, segSize, count, func(e *entry) {
		switch {
		case k == len(want) || e.kind != kindMsg:
		case e.seq == want[k].seq:
			want[k].off, want[k].size = e.off, e.size
			k++
		case e.seq > want[k].seq:
			missing = true // a wanted seq without a record
		}
	})
	return whole && !missing && k == len(want)
}
