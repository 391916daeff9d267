package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Open opens (or creates) the stream stored in dir, recovering from any
// crash, and starts its appender goroutine; Close stops it. cfg is the
// stream's config: it is normalized, validated and stored beside the log.
// What recovery found is in Recovery(); damage never makes Open fail, I/O
// errors do. A memory stream (cfg.Storage == StorageMemory) ignores dir.
func Open(dir string, cfg StreamConfig, opts Options) (*Log, error) {
	cfg = cfg.Normalized()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults(cfg)
	l := &Log{
		dir:      path.Clean(dir),
		fs:       opts.FS,
		opts:     opts,
		memory:   cfg.Storage == StorageMemory,
		cfg:      cfg,
		cat:      newCatalog(),
		reqs:     make(chan *request, opts.AppendQueue),
		wake:     make(chan struct{}, 1),
		index:    opts.IndexCache,
		loadKick: make(chan struct{}, 1),
		done:     make(chan struct{}),
		io:       newIOStats(),
	}
	if l.memory {
		l.dir = "/mem"
	}
	l.cat.entries = l.segmentEntries
	l.cat.onLoad = l.noteLoad
	if l.index == nil {
		l.index, l.ownIndex = NewIndexCache(IndexCacheOptions{}), true
	}
	l.cat.clock.Store(time.Now().UnixNano()) // real time, like the ticker that advances it
	l.ap.dd = newDedup(int64(cfg.DuplicateWindow))
	// The directory must be durable before anything stored in it is
	// acknowledged (a new stream's first append is).
	_, err := l.fs.ReadDir(l.dir)
	created := errors.Is(err, fs.ErrNotExist)
	if err := vfs.MkdirAllDurable(l.fs, l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("jetlog: open %q: %w", dir, err)
	}
	// A failed Open of a new stream (out of file descriptors, disk full)
	// removes the directory it made, which would otherwise come back as
	// a stream at the next start.
	fail := func(err error) (*Log, error) {
		for _, s := range l.cat.segs {
			_ = s.release() // already failing
		}
		_ = l.releaseLock() // already failing
		if created {
			if rerr := removeTree(l.fs, l.dir); rerr != nil {
				l.opts.Logger.Warn("jetlog: remove the directory of a stream that failed to open", "dir", l.dir, "err", rerr)
			} else {
				_ = l.fs.SyncDir(path.Dir(l.dir)) // best effort: an undurable removal leaves an empty directory
			}
		}
		return nil, err
	}
	if !l.memory {
		l.files = opts.FileCache
	}
	if l.files != nil {
		unlock, err := l.files.claim(l.fs, l.dir)
		if err != nil {
			return fail(fmt.Errorf("jetlog: open %q: %w", dir, err))
		}
		l.unlock = unlock
	} else if lk, ok := l.fs.(vfs.Locker); ok {
		unlock, err := lk.Lock(path.Join(l.dir, lockFile))
		if err != nil {
			return fail(fmt.Errorf("jetlog: open %q: %w", dir, err))
		}
		l.unlock = unlock
	}
	if !l.memory {
		s, err := loadSealer(l.fs, l.dir, opts.Keys, keyCreate)
		if err != nil {
			return fail(fmt.Errorf("jetlog: open %q: %w", dir, err))
		}
		l.seal = s
	}
	if err := l.storeConfig(); err != nil {
		return fail(err)
	}
	if err := l.recover(); err != nil {
		return fail(err)
	}
	if err := l.rebuildTTLs(); err != nil {
		return fail(err)
	}
	l.durable.Store(l.cat.last)
	for _, c := range l.report.Corrupt {
		l.opts.Logger.Error("jetlog: corrupt record", "dir", l.dir, "segment", c.Segment, "offset", c.Offset, "reason", c.Reason)
	}
	for _, x := range l.report.Losses {
		l.opts.Logger.Error("jetlog: messages lost", "stream", x.Stream, "dir", l.dir, "first", x.First, "last", x.Last,
			"acked", string(x.Acked), "segment", x.Segment, "reason", x.Reason)
	}
	if l.report.TruncatedBytes > 0 {
		l.opts.Logger.Warn("jetlog: truncated torn tail", "dir", l.dir, "segment", l.report.TornSegment, "bytes", l.report.TruncatedBytes)
	}
	l.noteActiveSize() // before the appender runs, so DiskBytes counts the active segment at once
	for _, seg := range l.cat.segs {
		if cf, ok := seg.f.(*cachedFile); ok {
			cf.drop() // recovery read it; the first use opens it again
		}
	}
	go l.run()
	return l, nil
}

// releaseLock drops the directory lock, if any.
func (l *Log) releaseLock() error {
	if l.unlock == nil {
		return nil
	}
	err := l.unlock.Close()
	l.unlock = nil
	return err
}

// storeConfig writes cfg to stream.meta unless it is already there,
// reporting a damaged file.
func (l *Log) storeConfig() error {
	name := path.Join(l.dir, metaFile)
	var m streamMeta
	err := readChecked(l.fs, l.seal, name, &m)
	var ce *CorruptError
	created := false
	switch {
	case err == nil && configEqual(m.Config, l.cfg):
		return nil
	case err == nil:
	case errors.As(err, &ce):
		l.report.Problems = append(l.report.Problems, fmt.Sprintf("%s damaged (%s): rewritten from the given config", metaFile, ce.Reason))
	case errors.Is(err, fs.ErrNotExist):
		created = true
	default:
		return fmt.Errorf("jetlog: read config: %w", err)
	}
	if m.Created.IsZero() {
		m.Created = l.opts.Now().UTC()
	}
	if err := writeChecked(l.fs, l.seal, name, streamMeta{Version: 1, Config: l.cfg, Created: m.Created}); err != nil {
		return fmt.Errorf("jetlog: store config: %w", err)
	}
	if created {
		// The directory may be left by a process that died before making
		// it durable (MkdirAllDurable leaves an existing one alone): a
		// stream without its meta is new, so make its entry durable now.
		if err := l.fs.SyncDir(path.Dir(l.dir)); err != nil {
			return fmt.Errorf("jetlog: sync dir %q: %w", path.Dir(l.dir), err)
		}
	}
	return nil
}

func configEqual(a, b StreamConfig) bool { return reflect.DeepEqual(a, b) }

// recover loads every segment (from its index when it can be trusted,
// otherwise by scanning it), replays records into the catalog, applies the
// limits and rebuilds the dedup window.
func (l *Log) recover() error {
	names, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("jetlog: list %q: %w", l.dir, err)
	}
	var ids []uint64
	idxs := map[uint64]bool{}
	var blks []uint64 // block directories (segblocks.go)
	clean := false
	for _, n := range names {
		switch {
		case n == cleanFile:
			clean = true
		case strings.HasSuffix(n, tmpSuffix):
			_ = l.fs.Remove(path.Join(l.dir, n)) // leftover of an interrupted atomic write
		case strings.HasSuffix(n, idxSuffix):
			if id, ok := parseSegName(strings.TrimSuffix(n, idxSuffix) + segSuffix); ok {
				idxs[id] = true
			}
		case strings.HasSuffix(n, blkSuffix):
			if id, ok := parseSegName(strings.TrimSuffix(n, blkSuffix) + segSuffix); ok {
				blks = append(blks, id)
			}
		default:
			if id, ok := parseSegName(n); ok {
				ids = append(ids, id)
			}
		}
	}
	l.report.Clean = clean
	mark, hasMark := seqMark{}, false
	if l.memory {
		l.ap.mark = noMark
	} else {
		mark, hasMark = l.readMark()
		l.ap.mark = mark // what recovery's own mark writes keep (segment ids, reservation, durable mark)
	}
	if clean {
		// From here on a crash is not a clean shutdown.
		if err := l.fs.Remove(path.Join(l.dir, cleanFile)); err != nil {
			return fmt.Errorf("jetlog: remove clean marker: %w", err)
		}
	}
	restored := false
	if clean && len(ids) > 0 {
		if restored, err = l.restoreCatalog(ids, idxs); err != nil {
			return err
		}
	} else if err := l.fs.Remove(path.Join(l.dir, catalogFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Left by a Close that did not finish: never trust it later.
		return fmt.Errorf("jetlog: remove %s: %w", catalogFile, err)
	}
	rp := replayer{l: l, durable: mark.Durable}
	for i, id := range ids {
		last := i == len(ids)-1
		if restored {
			break
		}
		rp.missing = ""
		if i > 0 && ids[i-1] != id-1 {
			rp.missing = segRangeName(ids[i-1]+1, id-1)
		}
		if err := rp.loadSegment(id, last, clean && idxs[id]); err != nil {
			return err
		}
	}
	l.report.Segments = len(ids)
	for id := range idxs {
		if len(ids) == 0 || id < ids[0] || id > ids[len(ids)-1] {
			_ = l.fs.Remove(path.Join(l.dir, idxName(id))) // orphan index
		}
	}
	for _, id := range blks {
		if !slices.Contains(ids, id) {
			_ = l.fs.Remove(path.Join(l.dir, blkName(id))) // orphan block directory
		}
	}
	tailMissing := hasMark && l.checkMark(mark, ids, &rp)
	if err := l.keepLostSeqs(tailMissing); err != nil {
		return err
	}
	if len(l.cat.segs) == 0 {
		// Above any segment the mark says existed, so a missing one is
		// never mistaken for this one.
		id := mark.Seg + 1
		f, err := l.createSegmentFile(segName(id))
		if err != nil {
			return fmt.Errorf("jetlog: create segment: %w", err)
		}
		l.cat.appendSegment(newSegment(id, f, 0))
		l.ap.idx.reset()
		if !l.memory {
			if err := l.fs.SyncDir(l.dir); err != nil {
				return fmt.Errorf("jetlog: sync dir: %w", err)
			}
		}
		if l.cat.last > 0 { // a lost log: the new segment carries its last seq
			l.ap.tomb.force = true
			l.ap.tomb.floor = l.cat.last + 1
			if err := l.flushTomb(true); err != nil {
				return err
			}
		}
	}
	// Limits may have removed messages that tombstones did not record.
	l.enforceLimits(nil)
	if l.cfg.MaxAge > 0 {
		l.expireLocked(l.opts.Now().Add(-l.cfg.MaxAge).UnixNano())
	}
	dead := l.detachDeadLocked()
	l.removeSegments(dead)
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("jetlog: sync dir: %w", err)
	}
	if !l.memory {
		// What the log holds now is the durable mark from here on.
		if err := l.active().f.Sync(); err != nil {
			return fmt.Errorf("jetlog: sync %s: %w", l.active().name, err)
		}
		l.durable.Store(l.cat.last)
		if err := l.storeMark(mark.Reserved); err != nil {
			return err
		}
	}
	undamaged := len(l.report.Corrupt) == 0 && len(l.report.Lost) == 0 && l.report.TruncatedBytes == 0
	if clean && undamaged && l.loadDedup() {
		return nil
	}
	return l.rebuildDedup()
}

// loadDedup restores the dedup window from the snapshot a clean Close
// wrote, and removes it: after this open, only a new clean Close makes one
// trustworthy again. It reports false when there is none or it is damaged.
func (l *Log) loadDedup() bool {
	name := path.Join(l.dir, dedupFile)
	var snap dedupSnapshot
	err := readCheckedStream(l.fs, l.seal, name, &snap)
	_ = l.fs.Remove(name) // stale from here on; a failed remove is harmless
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.report.Problems = append(l.report.Problems, "dedup snapshot unreadable, rebuilt from the log: "+err.Error())
		}
		return false
	}
	if !l.ap.dd.restore(snap) {
		l.ap.dd = newDedup(int64(l.cfg.DuplicateWindow))
		l.report.Problems = append(l.report.Problems, "dedup snapshot malformed, rebuilt from the log")
		return false
	}
	l.ap.dd.expire(l.opts.Now().UnixNano())
	l.report.DedupRestored = true
	return true
}

// rebuildDedup reads the msg ids of the messages inside the window.
func (l *Log) rebuildDedup() error {
	c := &l.cat
	cut := l.opts.Now().Add(-l.cfg.DuplicateWindow).UnixNano()
	first := len(c.segs) // the oldest segment with messages inside the window
	for first > 0 && c.segs[first-1].lastTS >= cut {
		first--
	}
	return l.liveRecords(c.segs[first:], func(m *msgMeta) bool { return m.ts >= cut }, func(seq uint64, r record) {
		if id := msgID(r.hdr); id != nil {
			l.ap.dd.add(id, seq, r.ts)
		}
	})
}

// liveRecords reads, in seq order, the record of every live message of
// segs that want selects, for Open's rebuilds (dedup window, TTLs). A
// damaged record is reported and skipped; another read error stops it.
func (l *Log) liveRecords(segs []*segment, want func(*msgMeta) bool, visit func(seq uint64, r record)) error {
	var buf []byte
	for _, seg := range segs {
		if seg.live == 0 {
			continue
		}
		l.cat.load(seg)
		for j := range seg.metas {
			m := &seg.metas[j]
			if m.subj == nil || !want(m) {
				continue
			}
			buf = growTo(buf, int(m.size))
			r, err := seg.readRecord(l.seal, buf, m.off)
			if err != nil {
				var ce *CorruptError
				if errors.As(err, &ce) {
					l.report.Corrupt = append(l.report.Corrupt, ce)
					continue
				}
				return err
			}
			visit(seg.first+uint64(j), r)
		}
	}
	return nil
}

func growTo(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
