package jetlog

import (
	"slices"
	"strings"
)

// catalog is the in-memory view of a stream: where each live message is,
// per-subject sequences, and the totals State reports. It is not safe for
// concurrent use; Log.mu guards it.
type catalog struct {
	base     uint64    // seq of metas[0]; metas[0] is live whenever msgs > 0
	metas    []msgMeta // metas[i] describes seq base+i
	last     uint64    // highest seq ever assigned
	lastTS   int64     // timestamp of last
	msgs     uint64    // live messages
	bytes    uint64    // record bytes of live messages
	subjects map[string]*subjectState
}

// msgMeta locates one message. A nil seg means deleted.
type msgMeta struct {
	seg  *segment
	subj *subjectState
	off  int64
	ts   int64
	size uint32
}

// subjectState lists the live seqs of one subject, ascending.
type subjectState struct {
	name string
	seqs []uint64
}

func newCatalog() catalog {
	return catalog{base: 1, subjects: map[string]*subjectState{}}
}

// first returns the first live seq, or last+1 when empty.
func (c *catalog) first() uint64 {
	if c.msgs == 0 {
		return c.last + 1
	}
	return c.base
}

// meta returns the live meta of seq.
func (c *catalog) meta(seq uint64) (*msgMeta, bool) {
	if seq < c.base || seq >= c.base+uint64(len(c.metas)) {
		return nil, false
	}
	m := &c.metas[seq-c.base]
	return m, m.seg != nil
}

// subject returns the interned state for name, creating it.
func (c *catalog) subject(name string) *subjectState {
	if s, ok := c.subjects[name]; ok {
		return s
	}
	s := &subjectState{name: strings.Clone(name)} // do not pin the caller's memory
	c.subjects[s.name] = s
	return s
}

// subjectBytes is subject for a name decoded from disk; it copies the name
// only when the subject is new.
func (c *catalog) subjectBytes(name []byte) *subjectState {
	if s, ok := c.subjects[string(name)]; ok { // no allocation for the lookup
		return s
	}
	return c.subject(string(name))
}

// add records a new live message; seq must be above every seq added so far.
// Seqs skipped since the last add become deleted slots.
func (c *catalog) add(seq uint64, ts int64, subj *subjectState, seg *segment, off int64, size uint32) {
	if c.msgs == 0 {
		c.metas = c.metas[:0]
		c.base = seq
	}
	for c.base+uint64(len(c.metas)) < seq {
		c.metas = append(c.metas, msgMeta{})
	}
	c.metas = append(c.metas, msgMeta{seg: seg, subj: subj, off: off, ts: ts, size: size})
	subj.seqs = append(subj.seqs, seq)
	seg.live++
	c.msgs++
	c.bytes += uint64(size)
	c.noteSeq(seq, ts)
}

// noteSeq raises last (tombstones carry the last seq of their time, so a
// fully purged stream keeps its sequence across restarts).
func (c *catalog) noteSeq(seq uint64, ts int64) {
	if seq > c.last {
		c.last = seq
		c.lastTS = ts
	}
}

// remove deletes seq and reports whether it was live.
func (c *catalog) remove(seq uint64) bool {
	m, ok := c.meta(seq)
	if !ok {
		return false
	}
	s := m.subj
	if len(s.seqs) > 0 && s.seqs[0] == seq {
		s.seqs = s.seqs[1:]
	} else if i, found := slices.BinarySearch(s.seqs, seq); found {
		s.seqs = slices.Delete(s.seqs, i, i+1)
	}
	if len(s.seqs) == 0 {
		delete(c.subjects, s.name)
	}
	m.seg.live--
	c.msgs--
	c.bytes -= uint64(m.size)
	*m = msgMeta{}
	c.trim()
	return true
}

// trim drops deleted slots at the front so metas[0] is live.
func (c *catalog) trim() {
	i := 0
	for i < len(c.metas) && c.metas[i].seg == nil {
		i++
	}
	if i == 0 {
		return
	}
	c.base += uint64(i)
	c.metas = c.metas[i:]
	if len(c.metas) == 0 {
		c.metas = nil
		c.base = c.last + 1
	} else if cap(c.metas) > 1024 && len(c.metas) < cap(c.metas)/4 {
		c.metas = slices.Clone(c.metas) // give back the dropped front
	}
}

// removeBelow deletes every live seq below floor and returns how many.
func (c *catalog) removeBelow(floor uint64, removed func(seq uint64)) uint64 {
	var n uint64
	for c.msgs > 0 && c.base < floor {
		seq := c.base
		if c.remove(seq) {
			n++
			if removed != nil {
				removed(seq)
			}
		}
	}
	if c.msgs == 0 && floor > c.base {
		c.base = floor
	}
	return n
}

// oldest returns the first live seq and its meta.
func (c *catalog) oldest() (uint64, *msgMeta, bool) {
	if c.msgs == 0 {
		return 0, nil, false
	}
	return c.base, &c.metas[0], true
}

// numDeleted counts the deleted seqs between first and last.
func (c *catalog) numDeleted() uint64 {
	if c.msgs == 0 {
		return 0
	}
	return c.last - c.base + 1 - c.msgs
}
