package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// control runs one non-append operation in the appender goroutine.
func (l *Log) control(r *request) {
	switch r.op {
	case opPurge:
		r.n, r.err = l.doPurge(r.purge)
	case opExpire:
		r.n = l.expire()
	case opConfig:
		r.err = l.doUpdateConfig(r.cfg)
	case opSync:
		r.err = l.flushTomb(true)
	case opEvict:
		r.n = l.evictIdle(r.idle)
		l.accountSections()
	case opLastMsgID:
		var id []byte
		if id, r.err = l.lastMsgID(); r.err == nil {
			r.id = string(id)
		}
	case opSkip:
		r.err = l.doSkip(r.seq)
	case opClose:
		l.closeErr = l.doClose()
	}
}

// flushTomb writes the pending tombstone, if any, and syncs it when sync
// is set (or the durability mode asks for it).
func (l *Log) flushTomb(sync bool) error {
	if l.fatal != nil {
		return l.fatal
	}
	if !l.ap.tomb.empty() {
		if err := l.maybeRoll(); err != nil {
			return err
		}
		seg := l.active()
		l.ap.buf = l.ap.buf[:0]
		mark := l.ap.idx.mark()
		l.encodeTomb(seg, l.cat.last, max(l.opts.Now().UnixNano(), l.cat.lastTS), nil, 0)
		if err := l.write(seg, l.ap.buf); err != nil {
			l.ap.idx.truncate(mark)
			return err
		}
		l.ap.tomb.clear()
	}
	if sync && l.ap.dirty {
		return l.syncActive()
	}
	return nil
}

// maybeRoll starts a new segment when the active one is full.
func (l *Log) maybeRoll() error {
	if l.active().size < l.opts.SegmentSize {
		return nil
	}
	return l.roll()
}

// roll seals the active segment (sync, write its index) and starts a new
// one whose first record will be a tombstone carrying the stream's first
// and last seq, so a segment alone tells where the stream stands.
func (l *Log) roll() error {
	old := l.active()
	if l.ap.dirty || l.durability() != DurabilityNone {
		if err := l.syncActive(); err != nil {
			return err
		}
	}
	if err := l.trimAllocation(old); err != nil {
		// Its records are synced; recovery takes the zeros for reserved space.
		l.opts.Logger.Warn("jetlog: seal segment", "segment", old.name, "err", err)
	}
	l.cat.load(old) // before its index file changes
	old.loadOrder.Store(l.cat.loads.Add(1))
	// The appender's writes are not a use: unless a reader (or a limit)
	// uses the section from now on, the next tick drops it.
	old.used.Store(0)
	old.sealed.Store(true)
	if err := l.writeIndex(old); err != nil {
		// The segment is intact; recovery rescans it without an index.
		l.opts.Logger.Warn("jetlog: write index", "segment", old.name, "err", err)
	}
	// Above every segment seq.mark knows of: after segments went missing
	// their ids are not used again.
	id := max(old.id, l.ap.mark.Seg) + 1
	f, err := l.createSegmentFile(segName(id))
	if err != nil {
		return fmt.Errorf("jetlog: create segment %s: %w", segName(id), err)
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		_ = f.Close() // the sync error is the one that matters
		return l.setFatal(fmt.Errorf("%w: sync dir %s: %w", ErrWriteFenced, l.dir, err))
	}
	seg := newSegment(id, f, 0)
	l.mu.Lock()
	l.cat.appendSegment(seg)
	dead := l.detachDeadLocked()
	l.mu.Unlock()
	// Once the new segment's name is durable, and before the old ones go,
	// the mark says where the log now stands.
	if err := l.storeMark(l.ap.mark.Reserved); err != nil {
		l.mu.Lock()
		l.cat.segs = append(dead, l.cat.segs[:len(l.cat.segs)-1]...)
		l.mu.Unlock()
		_ = seg.release() // the mark error is the one that matters
		_ = l.fs.Remove(segPath(l.dir, seg.name))
		return err
	}
	l.ap.idx.reset()
	l.ap.tomb.force = true
	if l.ap.tomb.floor == 0 {
		l.ap.tomb.floor = l.cat.first()
	}
	l.removeSegments(dead)
	l.keepIndexBound() // the sealed section counts from now on
	return nil
}

// writeIndex writes the index file of a segment whose records are all
// written (its entries are in l.ap.idx).
func (l *Log) writeIndex(seg *segment) error {
	name := segPath(l.dir, idxName(seg.id))
	plain := l.ap.idx.finish(seg.size)
	data := l.seal.sealFile(plain, name)
	f, err := l.fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the write error is the one that matters
		return err
	}
	if l.durability() != DurabilityNone {
		if err := f.Sync(); err != nil {
			_ = f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	l.writeBlockDir(seg, plain, l.ap.idx.blocks, l.ap.idx.names)
	seg.loadMu.Lock() // a prefetch may be reading it
	seg.indexed = seg.size
	seg.loadMu.Unlock()
	return nil
}

// detachDeadLocked takes the leading segments without live messages out of
// the list (never the active one) and returns them for removeSegments.
// l.mu is held.
func (l *Log) detachDeadLocked() []*segment {
	i := 0
	for i < len(l.cat.segs)-1 && l.cat.segs[i].live == 0 {
		i++
	}
	if i == 0 {
		return nil
	}
	dead := append([]*segment(nil), l.cat.segs[:i]...)
	l.cat.segs = append(l.cat.segs[:0], l.cat.segs[i:]...)
	return dead
}

// removeSegments deletes detached segment files and syncs the directory.
// A failure is logged: the files hold only removed messages, which the
// tombstones after them keep removed.
func (l *Log) removeSegments(dead []*segment) {
	if len(dead) == 0 {
		return
	}
	if l.ap.mark.FirstSeg < l.cat.segs[0].id {
		// The mark must say these were removed on purpose before they go.
		if err := l.storeMark(l.ap.mark.Reserved); err != nil {
			l.opts.Logger.Warn("jetlog: keeping removable segments", "dir", l.dir, "err", err)
			l.mu.Lock()
			l.cat.segs = append(dead, l.cat.segs...)
			l.mu.Unlock()
			return
		}
	}
	for _, s := range dead {
		for _, name := range []string{s.name, idxName(s.id), blkName(s.id)} {
			if err := l.fs.Remove(path.Join(l.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				l.opts.Logger.Warn("jetlog: remove segment", "file", name, "err", err)
			}
		}
		if err := s.release(); err != nil {
			l.opts.Logger.Warn("jetlog: close segment", "file", s.name, "err", err)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		l.opts.Logger.Warn("jetlog: sync dir", "dir", l.dir, "err", err)
	}
	l.accountSections()
}

// doClose flushes, syncs, writes the active index and the clean marker.
func (l *Log) doClose() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.prefetches.Wait() // none starts once closed is set
	var err error
	if l.fatal == nil {
		err = l.flushTomb(true)
		if err == nil && l.ap.dirty {
			err = l.syncActive()
		}
		if err == nil && !l.memory {
			err = l.trimAllocation(l.active())
		}
		if err == nil && !l.memory {
			if seg := l.active(); seg.indexed != seg.size {
				err = l.writeIndex(seg)
			}
			if err == nil {
				err = writeCheckedStream(l.fs, l.seal, path.Join(l.dir, dedupFile), l.ap.dd.snapshot())
			}
			if err == nil { // exact: nothing is assigned after this
				err = l.storeMark(l.cat.last)
			}
			if err == nil {
				l.mu.Lock()
				snap := l.cat.snapshot()
				l.mu.Unlock()
				// Checked after the snapshot, which saw every load that
				// finished: a load that found damage leaves no snapshot.
				if !l.cat.damaged.Load() {
					err = writeCheckedSized(l.fs, l.seal, path.Join(l.dir, catalogFile), &snap, snap.encodedSize())
				}
			}
			if err == nil { // last: it vouches for the index and the snapshots
				err = writeFileAtomic(l.fs, path.Join(l.dir, cleanFile), nil)
			}
		}
	}
	l.mu.Lock()
	segs := l.cat.segs
	l.cat.segs = nil
	consumers := l.consumers
	l.consumers = nil
	l.mu.Unlock()
	for c := range consumers {
		if cerr := c.close(); cerr != nil && !errors.Is(cerr, ErrClosed) && err == nil {
			err = cerr
		}
	}
	for _, s := range segs {
		if cerr := s.release(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if cerr := l.releaseLock(); cerr != nil && err == nil {
		err = cerr
	}
	l.index.bytes.Add(-l.indexCharged)
	l.indexCharged = 0
	if l.ownIndex {
		_ = l.index.Close() // only waits for a hand-back
	}
	return err
}
