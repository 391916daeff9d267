package jetlog

// dedup remembers the msg ids appended within the duplicate window. It is
// owned by the appender goroutine (and by Open before it starts).
type dedup struct {
	window int64                 // ns
	ids    map[string]dedupEntry // by msg id
	order  []dedupItem           // ascending ts; order[head:] is live
	head   int
}

type dedupEntry struct {
	seq uint64
	ts  int64
}

type dedupItem struct {
	id string
	ts int64
}

func newDedup(window int64) dedup {
	return dedup{window: window, ids: map[string]dedupEntry{}}
}

// lookup returns the seq of id if it was appended within the window of now.
func (d *dedup) lookup(id []byte, now int64) (uint64, bool) {
	e, ok := d.ids[string(id)]
	if !ok || e.ts < now-d.window {
		return 0, false
	}
	return e.seq, true
}

// add remembers id; ts must not decrease between calls.
func (d *dedup) add(id []byte, seq uint64, ts int64) { d.addString(string(id), seq, ts) }

// addString is add for an id the window may keep as it is (the map and
// the order share it: one copy of each id).
func (d *dedup) addString(id string, seq uint64, ts int64) {
	d.ids[id] = dedupEntry{seq: seq, ts: ts}
	d.order = append(d.order, dedupItem{id: id, ts: ts})
}

// expire forgets ids older than the window.
func (d *dedup) expire(now int64) {
	cut := now - d.window
	for d.head < len(d.order) && d.order[d.head].ts < cut {
		it := d.order[d.head]
		if e, ok := d.ids[it.id]; ok && e.ts == it.ts {
			delete(d.ids, it.id)
		}
		d.order[d.head] = dedupItem{}
		d.head++
	}
	if d.head > 1024 && d.head > len(d.order)/2 {
		d.order = append(d.order[:0:0], d.order[d.head:]...)
		d.head = 0
	}
}

// dedupSnapshot is the dedup window as written at a clean Close, so a
// clean restart need not read the messages inside the window to find
// their ids. Part of the disk format (see doc.go).
type dedupSnapshot struct {
	IDs  []string `msgpack:"ids"`
	Seqs []uint64 `msgpack:"seqs"`
	TS   []int64  `msgpack:"ts"`
}

// snapshot lists the live ids in ascending time.
func (d *dedup) snapshot() dedupSnapshot {
	n := len(d.ids)
	s := dedupSnapshot{IDs: make([]string, 0, n), Seqs: make([]uint64, 0, n), TS: make([]int64, 0, n)}
	for _, it := range d.order[d.head:] {
		if e, ok := d.ids[it.id]; ok && e.ts == it.ts {
			s.IDs, s.Seqs, s.TS = append(s.IDs, it.id), append(s.Seqs, e.seq), append(s.TS, e.ts)
		}
	}
	return s
}

// restore adds a snapshot's ids, keeping the snapshot's strings (no copy:
// a restarted window costs what it cost before); it reports false for a
// malformed one.
func (d *dedup) restore(s dedupSnapshot) bool {
	if len(s.Seqs) != len(s.IDs) || len(s.TS) != len(s.IDs) {
		return false
	}
	if len(d.ids) == 0 {
		d.ids = make(map[string]dedupEntry, len(s.IDs))
		d.order = make([]dedupItem, 0, len(s.IDs))
	}
	for i, id := range s.IDs {
		if i > 0 && s.TS[i] < s.TS[i-1] {
			return false
		}
		d.addString(id, s.Seqs[i], s.TS[i])
	}
	return true
}
