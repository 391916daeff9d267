package jetlog

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// maxBatch bounds how many requests one commit gathers.
const maxBatch = 4096

// appender is the state the appender goroutine owns.
type appender struct {
	dd        dedup
	ttl       ttlIndex // expiries of messages with a Nats-TTL (ttl.go)
	buf       []byte
	idx       indexBuilder // index of the active segment
	staged    []stagedMsg
	deletes   []uint64 // explicit deletes and subject rollups in the current commit
	rollFloor uint64   // the highest seq of a RollupAll in the commit (rollup.go)
	ids       map[string]uint64
	perSubj   map[string]int64
	touched   []*subjectState
	tomb      pendingTomb
	tombBuf   []byte
	zbuf      []byte // compressed payload being written (compress.go)
	lastSync  time.Time
	dirty     bool // bytes written and not synced

	mark     seqMark   // as last written to seq.mark (noMark for memory streams)
	markStep uint64    // the current reservation step (see reserve)
	markAt   time.Time // when the last reservation was written

	lastID      []byte // msg id of the newest stored message (Expect.LastMsgID)
	lastIDKnown bool   // lastID is set; false after Open and a purge (read on first need)
}

// stagedMsg is a message encoded into the commit buffer but not yet
// published.
type stagedMsg struct {
	req  *request
	idx  int // in req.msgs
	seq  uint64
	ts   int64
	off  int64
	size uint32
	id   []byte
}

// pendingTomb holds removals applied to the catalog but not yet journaled.
// Recovery re-applies limits, so losing it in a crash only matters for
// explicit deletes, which are journaled before they return.
type pendingTomb struct {
	floor uint64
	seqs  []uint64
	force bool // write a tombstone even if empty (first record of a segment)
}

func (t *pendingTomb) empty() bool { return t.floor == 0 && len(t.seqs) == 0 && !t.force }

func (t *pendingTomb) clear() {
	t.floor, t.seqs, t.force = 0, t.seqs[:0], false
}

// run is the appender goroutine.
func (l *Log) run() {
	defer close(l.done)
	l.noteActiveSize()
	batch := make([]*request, 0, 64)
	// The background expiry runs only while there is something for it to
	// do (see idle), so that a thousand idle streams cost no wake-ups.
	var expire <-chan time.Time
	expiry := time.NewTimer(time.Hour)
	expiry.Stop()
	defer expiry.Stop()
	resume := func() {
		if expire == nil && l.opts.ExpireEvery > 0 && !l.idle() {
			l.cat.clock.Store(l.opts.Now().UnixNano())
			expiry.Reset(l.opts.ExpireEvery)
			expire = expiry.C
		}
	}
	l.keepIndexBound() // a replay at Open loads every section
	resume()
	var consumerSync <-chan time.Time
	if l.durability() == DurabilityInterval {
		t := time.NewTicker(l.cfg.SyncInterval)
		defer t.Stop()
		consumerSync = t.C
	}
	syncTimer := time.NewTimer(time.Hour)
	syncTimer.Stop()
	defer syncTimer.Stop()
	for {
		// Company: the last batch had several requests, or one queued
		// while it ran.
		company := len(batch) > 1 || len(l.reqs) > 0
		select {
		case r := <-l.reqs:
			batch = l.gather(append(batch[:0], r), company)
			if l.process(batch) {
				return
			}
			if l.ap.dirty && l.durability() == DurabilityInterval {
				syncTimer.Reset(max(time.Until(l.ap.lastSync.Add(l.cfg.SyncInterval)), 0))
			}
			resume()
		case <-l.wake:
			if batch = l.takeDeferred(batch[:0], false); len(batch) == 0 {
				continue
			}
			if l.process(l.gather(batch, true)) {
				return
			}
			if l.ap.dirty && l.durability() == DurabilityInterval {
				syncTimer.Reset(max(time.Until(l.ap.lastSync.Add(l.cfg.SyncInterval)), 0))
			}
			resume()
		case <-l.loadKick:
			if expire == nil {
				l.freshenClock()
			}
			l.keepIndexBound()
			resume()
		case now := <-expire:
			l.recountIfStale()
			l.expire()
			l.cat.clock.Store(now.UnixNano())
			l.evictIdleSections(now)
			expire = nil
			resume()
		case <-syncTimer.C:
			if l.ap.dirty {
				if err := l.syncActive(); err != nil {
					l.opts.Logger.Error("jetlog: interval sync failed", "dir", l.dir, "err", err)
				}
			}
		case <-consumerSync:
			l.syncConsumers()
		}
	}
}

// idle reports whether the background expiry has nothing to do: no msg
// id to forget, no message that can age out, no sealed segment's
// section loaded that could be evicted (a reader's load wakes the
// appender: loadKick). Called on the appender goroutine, which owns what
// it reads.
func (l *Log) idle() bool {
	c := &l.cat
	return len(l.ap.dd.ids) == 0 && (l.cfg.MaxAge <= 0 || c.msgs == 0) && (l.memory || l.indexCharged == 0) && len(l.ap.ttl.due) == 0
}

// gather adds every request already waiting to batch. In always mode,
// when there are several writers (company: the previous batch had
// several requests, or one was waiting as it ended), it also yields the processor a few times while that
// brings more requests: the writers released by the previous commit are
// about to come back, and taking them into this commit halves the number
// of fsyncs. A lone writer is not kept waiting: on a busy machine a yield
// can cost a whole time slice of another goroutine, which was the tail of
// a lone synchronous publisher (issue #30).
// see BenchmarkAppend
func (l *Log) gather(batch []*request, company bool) []*request {
	yields := 0
	if l.durability() == DurabilityAlways && company {
		yields = gatherYields
	}
	for {
		n := len(batch)
	drain:
		for len(batch) < maxBatch {
			select {
			case r := <-l.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		if yields == 0 || len(batch) >= maxBatch || (len(batch) == n && n > 1) {
			return batch
		}
		yields--
		runtime.Gosched()
	}
}

// gatherYields bounds the yields of gather.
const gatherYields = 4

// syncConsumers syncs the journals of open consumers (interval mode).
func (l *Log) syncConsumers() {
	l.mu.RLock()
	cs := make([]*Consumer, 0, len(l.consumers))
	for c := range l.consumers {
		cs = append(cs, c)
	}
	l.mu.RUnlock()
	for _, c := range cs {
		if err := c.syncIfDirty(); err != nil && !errors.Is(err, ErrClosed) {
			l.opts.Logger.Error("jetlog: consumer sync failed", "dir", c.dir, "err", err)
		}
	}
}

// process handles one gathered batch: runs of appends and deletes are
// group-committed; other operations run alone. It reports whether the log
// closed.
func (l *Log) process(batch []*request) bool {
	for i := 0; i < len(batch); {
		l.recountIfStale()
		r := batch[i]
		if r.op == opAppend || r.op == opDelete {
			j := i + 1
			for j < len(batch) && (batch[j].op == opAppend || batch[j].op == opDelete) {
				j++
			}
			for i < j {
				n := l.commit(batch[i:j])
				for _, r := range batch[i : i+n] {
					l.reply(r)
				}
				i += n
			}
			continue
		}
		closing := r.op == opClose
		if closing {
			// Deletes deferred by callbacks of the commits before go first.
			if deferred := l.takeDeferred(nil, true); len(deferred) > 0 {
				l.process(deferred)
			}
		}
		l.control(r)
		if closing {
			for _, rest := range batch[i+1:] {
				rest.err = ErrClosed
				l.reply(rest)
			}
			r.done <- struct{}{}
			return true
		}
		r.done <- struct{}{}
		i++
	}
	return false
}

// failAll sets err on every request of a run.
func failAll(run []*request, err error) {
	for _, r := range run {
		if r.err == nil {
			r.err = err
		}
	}
}

// commit encodes a run of appends and deletes into one buffer, writes it
// with one call, syncs once (per durability mode), then publishes. It
// returns how many requests of run it handled: all of them, unless one
// must wait for the next commit (needsOwnCommit).
// see BenchmarkAppend
func (l *Log) commit(run []*request) int {
	ap := &l.ap
	if l.fatal != nil {
		failAll(run, l.fatal)
		return len(run)
	}
	if err := l.maybeRoll(); err != nil {
		failAll(run, err)
		return len(run)
	}
	seg := l.active()
	l.cat.load(seg) // new slots go after the ones a clean restart left unloaded
	cfg := &l.cfg
	now := l.opts.Now().UnixNano()
	ts := max(now, l.cat.lastTS)
	// newest is the time of the last message staged, which no later one
	// may be older than (Expect.KeepTime times can be ahead of ts).
	newest := l.cat.lastTS
	ap.buf = ap.buf[:0]
	ap.staged = ap.staged[:0]
	ap.deletes = ap.deletes[:0]
	// The staged messages alias the requests' headers, which the replies
	// hand back: nothing may look at them after this commit.
	defer func() { ap.staged, ap.deletes, ap.rollFloor = ap.staged[:0], ap.deletes[:0], 0 }()
	clear(ap.ids)
	clear(ap.perSubj)
	mark := ap.idx.mark()
	next := l.cat.last + 1
	var stagedBytes uint64
	handled := len(run)
	for k, r := range run {
		if k > 0 && l.needsOwnCommit(r) {
			handled = k
			break
		}
		if r.op == opDelete {
			if _, ok := l.cat.meta(r.seq); !ok || containsSeq(ap.deletes, r.seq) {
				r.err = fmt.Errorf("jetlog: delete seq %d: %w", r.seq, ErrNotFound)
				continue
			}
			ap.deletes = append(ap.deletes, r.seq)
			continue
		}
		var undo undoPoint
		if r.atomic {
			undo = l.undoPoint(next, stagedBytes)
		}
		rolls := l.rollupMark()
		for i := range r.msgs {
			m := &r.msgs[i]
			ex := &r.expect
			if r.expects != nil {
				ex = &r.expects[i]
			}
			ack, size, id, err := l.admit(m, ex, next, stagedBytes, now)
			if err == nil && ack.Duplicate && r.atomic {
				err = &BatchDuplicateError{Index: i, Seq: ack.Seq}
			}
			if err != nil {
				r.err = err
				if r.atomic {
					next, stagedBytes = l.undo(r, undo)
				}
				break
			}
			if ack.Duplicate {
				r.acks = append(r.acks, ack)
				continue
			}
			off := seg.size + int64(len(ap.buf))
			data, compressed := l.compress(m.Data)
			if compressed {
				size = recordSize(m.Subject, m.Header, data) + l.seal.overhead()
			}
			mts := max(ts, newest)
			if ex.KeepTime && !m.Time.IsZero() {
				mts = max(m.Time.UnixNano(), newest)
			}
			newest = mts
			l.stageRollup(ex.Rollup, m.Subject, next)
			// Continued up to the tombstone holding its removals, if any.
			more := r.atomic && i < len(r.msgs)-1 || l.rolledUp(rolls)
			ap.buf = l.seal.appendRecord(ap.buf, kindMsg, next, mts, m.Subject, m.Header, data, recordFlagsFor(compressed, more))
			ap.idx.add(kindMsg, next, mts, off, size, m.Subject, nil)
			ap.staged = append(ap.staged, stagedMsg{req: r, idx: i, seq: next, ts: mts, off: off, size: uint32(size), id: id})
			r.acks = append(r.acks, PubAck{Seq: next, TS: mts})
			if id != nil {
				if ap.ids == nil {
					ap.ids = map[string]uint64{}
				}
				ap.ids[string(id)] = next
			}
			if cfg.MaxMsgsPerSubject > 0 && cfg.DiscardNewPerSubject {
				if ap.perSubj == nil {
					ap.perSubj = map[string]int64{}
				}
				ap.perSubj[m.Subject]++
			}
			stagedBytes += uint64(size)
			next++
		}
		if l.rolledUp(rolls) { // its tombstone must follow it at once
			handled = k + 1
			break
		}
	}
	if len(ap.staged) == 0 && len(ap.deletes) == 0 {
		return handled
	}
	tombLast := next - 1
	l.encodeTomb(seg, tombLast, ts, ap.deletes, ap.rollFloor)
	err := error(nil)
	if tombLast > ap.mark.Reserved {
		err = l.reserve(tombLast)
	}
	if err == nil {
		err = l.write(seg, ap.buf)
	}
	if err != nil {
		ap.idx.truncate(mark)
		for _, r := range run[:handled] {
			r.acks = r.acks[:0]
		}
		failAll(run[:handled], err)
		return handled
	}
	ap.tomb.clear()
	if n := len(ap.staged); n > 0 { // before the replies release the headers
		ap.lastID, ap.lastIDKnown = append(ap.lastID[:0], ap.staged[n-1].id...), true
	}
	l.commits.Add(1)
	l.appends.Add(uint64(len(ap.staged)))
	if len(ap.staged) > 0 {
		l.io.CommitSizes.Observe(uint64(len(ap.staged)))
	}

	l.preloadForLimits(stagedBytes)
	l.mu.Lock()
	ap.touched = ap.touched[:0]
	for i := range ap.staged {
		s := &ap.staged[i]
		m := &s.req.msgs[s.idx]
		subj := l.cat.subject(m.Subject)
		l.cat.add(s.seq, s.ts, subj, seg, s.off, s.size)
		ap.touched = append(ap.touched, subj)
	}
	for _, seq := range ap.deletes {
		l.cat.remove(seq)
	}
	l.cat.removeBelow(ap.rollFloor) // nothing when 0
	l.enforceLimits(ap.touched)
	dead := l.detachDeadLocked()
	if !ap.dirty {
		l.durable.Store(l.cat.last)
	}
	l.mu.Unlock()

	for i := range ap.staged {
		if s := &ap.staged[i]; s.id != nil {
			ap.dd.add(s.id, s.seq, s.ts)
		}
	}
	l.noteCommitted()
	if cap(ap.buf) > maxKeptBuf {
		ap.buf = nil // a burst of large messages should not pin memory
	}
	if cap(ap.zbuf) > maxKeptBuf {
		ap.zbuf = nil
	}
	l.removeSegments(dead)
	return handled
}

// preloadForLimits loads, before commit takes Log.mu, the sections that
// the discard-old limits are about to remove from, so that the exclusive
// lock is not held across reading an index. (A removal that reaches past
// them, such as a subject's next message in another unloaded segment,
// still loads under the lock.)
func (l *Log) preloadForLimits(stagedBytes uint64) {
	c, cfg, ap := &l.cat, &l.cfg, &l.ap
	staged := uint64(len(ap.staged))
	if cfg.MaxMsgs > 0 && c.msgs+staged > uint64(cfg.MaxMsgs) || cfg.MaxBytes > 0 && l.accounted(c.bytes+stagedBytes, c.msgs+staged) > uint64(cfg.MaxBytes) {
		c.loadAt(c.base)
	}
	if cfg.MaxMsgsPerSubject <= 0 {
		return
	}
	for i := range ap.staged {
		s := &ap.staged[i]
		if st, ok := c.subjects[s.req.msgs[s.idx].Subject]; ok && st.count >= uint64(cfg.MaxMsgsPerSubject) {
			c.loadAt(st.first)
		}
	}
}

// recountIfStale repairs the totals and subject summaries after a lazy
// load found records missing (see catalog.recount).
func (l *Log) recountIfStale() {
	if !l.cat.stale.Load() {
		return
	}
	l.mu.Lock()
	l.cat.recount()
	l.mu.Unlock()
	l.opts.Logger.Error("jetlog: records missing since the clean shutdown; counts rebuilt from the segments, the next open reports the lost seqs", "dir", l.dir)
}

// maxKeptBuf is the largest commit buffer kept for reuse.
const maxKeptBuf = 8 << 20

func containsSeq(seqs []uint64, seq uint64) bool {
	for _, s := range seqs {
		if s == seq {
			return true
		}
	}
	return false
}

// admitChecked checks one message against the subject rules, the size limit,
// its preconditions, dedup and the discard-new limits, in that order (see
// Expect). It returns the ack of a duplicate, or the record size and msg
// id of a message to write.
func (l *Log) admitChecked(m *Msg, ex *Expect, next, stagedBytes uint64, now int64) (PubAck, int, []byte, error) {
	cfg := &l.cfg
	if !storable(m.Subject) {
		return PubAck{}, 0, nil, fmt.Errorf("jetlog: append %q: %w", m.Subject, ErrBadSubject)
	}
	size := recordSize(m.Subject, m.Header, m.Data) + l.seal.overhead()
	if size-frameSize > maxBody || (cfg.MaxMsgSize > 0 && len(m.Header)+len(m.Data) > int(cfg.MaxMsgSize)) {
		return PubAck{}, 0, nil, fmt.Errorf("jetlog: append %q (%d bytes): %w", m.Subject, len(m.Header)+len(m.Data), ErrMsgTooLarge)
	}
	if err := l.checkSeqs(m, ex, next); err != nil {
		return PubAck{}, 0, nil, err
	}
	id := msgID(m.Header)
	if id != nil && !ex.NoDedup {
		if seq, ok := l.ap.ids[string(id)]; ok {
			return PubAck{Seq: seq, Duplicate: true}, 0, nil, nil
		}
		if seq, ok := l.ap.dd.lookup(id, now); ok {
			return PubAck{Seq: seq, Duplicate: true}, 0, nil, nil
		}
	}
	if ex.DuplicateOnly {
		return PubAck{}, 0, nil, fmt.Errorf("jetlog: append %q: %w", m.Subject, ErrNotDuplicate)
	}
	if err := l.checkMsgID(ex); err != nil {
		return PubAck{}, 0, nil, err
	}
	if cfg.Discard == DiscardNew {
		staged := next - l.cat.last - 1
		if cfg.MaxMsgs > 0 && l.cat.msgs+staged >= uint64(cfg.MaxMsgs) {
			return PubAck{}, 0, nil, fmt.Errorf("jetlog: append %q: %w", m.Subject, ErrMaxMsgs)
		}
		if cfg.MaxBytes > 0 && l.accounted(l.cat.bytes+stagedBytes+uint64(size), l.cat.msgs+staged+1) > uint64(cfg.MaxBytes) {
			return PubAck{}, 0, nil, fmt.Errorf("jetlog: append %q: %w", m.Subject, ErrMaxBytes)
		}
	}
	if cfg.MaxMsgsPerSubject > 0 && cfg.DiscardNewPerSubject {
		n := l.ap.perSubj[m.Subject]
		if s, ok := l.cat.subjects[m.Subject]; ok {
			n += int64(s.count)
		}
		if n >= cfg.MaxMsgsPerSubject {
			return PubAck{}, 0, nil, fmt.Errorf("jetlog: append %q: %w", m.Subject, ErrMaxMsgsPerSubject)
		}
	}
	return PubAck{}, size, id, nil
}
