package jetlog

// How a commit reaches the disk: the removals it journals, the one
// write of its buffer to the active segment, the sync the durability
// mode asks for, and the sticky error that stops the log when a write
// or sync fails (appender.go gathers and encodes the commit).

import (
	"fmt"
	"slices"
	"time"
)

// encodeTomb appends a tombstone record for the pending removals and the
// explicit deletes to the commit buffer, if there is anything to say.
func (l *Log) encodeTomb(seg *segment, last uint64, ts int64, deletes []uint64, rollFloor uint64) {
	ap := &l.ap
	t := &ap.tomb
	if t.empty() && len(deletes) == 0 && rollFloor == 0 {
		return
	}
	floor := max(t.floor, rollFloor)
	n := len(t.seqs)
	t.seqs = append(t.seqs, deletes...)
	seqs := slices.Clone(t.seqs) // rare; keeps t.seqs intact if the write fails
	t.seqs = t.seqs[:n]
	slices.Sort(seqs)
	seqs = slices.DeleteFunc(seqs, func(s uint64) bool { return s < floor })
	ap.tombBuf = appendTombstone(ap.tombBuf[:0], floor, slices.Compact(seqs))
	p := ap.tombBuf
	off := seg.size + int64(len(ap.buf))
	ap.buf = l.seal.appendRecord(ap.buf, kindDelete, last, ts, "", nil, p, 0)
	ap.idx.add(kindDelete, last, ts, off, recordFixed+l.seal.overhead()+len(p), "", p)
}

// write appends buf to seg at its end and syncs per the durability mode.
// A failed write is cut off again so the segment stays a sequence of whole
// records; a failed sync fences the stream.
func (l *Log) write(seg *segment, buf []byte) error {
	l.preallocate(seg, int64(len(buf)))
	if _, err := seg.f.WriteAt(buf, seg.size); err != nil {
		werr := fmt.Errorf("jetlog: write %s at %d: %w", seg.name, seg.size, err)
		if terr := seg.f.Truncate(seg.size); terr != nil {
			l.setFatal(fmt.Errorf("%w: truncate after failed write: %w", ErrWriteFenced, terr))
		}
		seg.alloc = 0
		return werr
	}
	seg.size += int64(len(buf))
	l.noteActiveSize()
	l.ap.dirty = true
	switch l.durability() {
	case DurabilityAlways:
		return l.syncActive()
	case DurabilityInterval:
		if time.Since(l.ap.lastSync) >= l.cfg.SyncInterval {
			return l.syncActive()
		}
	}
	return nil
}

// syncActive fdatasyncs the active segment.
func (l *Log) syncActive() error {
	if l.fatal != nil {
		return l.fatal
	}
	seg := l.active()
	l.fsyncs.Add(1)
	start := time.Now()
	if err := seg.f.Sync(); err != nil {
		return l.setFatal(fmt.Errorf("%w: fsync %s: %w", ErrWriteFenced, seg.name, err))
	}
	l.observeSync(start)
	l.ap.dirty = false
	l.ap.lastSync = time.Now() // real time: the sync interval is about I/O, not message time
	l.durable.Store(l.cat.last)
	return nil
}

// setFatal records the first fatal error and returns it.
func (l *Log) setFatal(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fatal == nil {
		l.fatal = err
	}
	return l.fatal
}

// active returns the active segment. Only the appender calls it.
func (l *Log) active() *segment { return l.cat.segs[len(l.cat.segs)-1] }
