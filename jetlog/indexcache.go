package jetlog

import (
	"cmp"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// IndexCache bounds the memory that the sections of sealed segments (the
// per-message index a segment's reads need, about 40 bytes a message)
// take across every Log that shares it (Options.IndexCache), so that
// memory follows what is being read, not what was ever touched. A sealed
// segment's section costs nothing until it is used; once the sections
// loaded add up to more than MaxBytes, each Log over it drops its own
// least recently used ones (never the one it loaded last) until the
// total is within the bound again or it has nothing left to drop.
// Dropping runs on the Log's appender, just after the load that went
// over, so the bound can be exceeded for as long as one load and one
// appender turn take, and by the Logs whose sections are all in use.
// Independently of the bound, a section unused for Options.EvictAfter
// is dropped (a segment just sealed counts as unused since long ago: the
// appender's own writes are not a use, so unless a reader uses it its
// section goes at the appender's next tick), and then the memory it held is handed back to the
// operating system (debug.FreeOSMemory, at most once per
// releaseInterval), because a Go process that has gone idle would
// otherwise keep it until its next garbage collection.
//
// The active segment's section is not counted: it is bounded by the
// segment size. It is safe for concurrent use; the zero value is not
// usable: call NewIndexCache.
type IndexCache struct {
	max     int64
	bytes   atomic.Int64 // of the sections counted
	freed   atomic.Int64 // dropped since the last hand-back
	loads   atomic.Uint64
	evicted atomic.Uint64

	mu        sync.Mutex // guards the fields below
	releasing bool       // a release is scheduled
	lastFree  time.Time  // when the last one ran
	closed    bool
	timer     *time.Timer
	wg        sync.WaitGroup // the release in flight
	releases  uint64
}

// IndexCacheOptions configure NewIndexCache.
type IndexCacheOptions struct {
	// MaxBytes bounds the sections of sealed segments held in memory;
	// zero means DefaultIndexCacheBytes.
	MaxBytes int64
}

// DefaultIndexCacheBytes is the default IndexCacheOptions.MaxBytes: two
// or three sealed segments of 64-byte messages, some twenty of 1 KiB ones.
const DefaultIndexCacheBytes = 64 << 20

// releaseInterval spaces the hand-backs of freed memory: each one costs a
// full garbage collection.
const releaseInterval = 10 * time.Second

// releaseMin is the least memory dropped since the last hand-back that
// is worth one.
const releaseMin = 1 << 20

// IndexCacheStats are the cache's gauges and counters.
type IndexCacheStats struct {
	Bytes    int64  // held by the sections of sealed segments now (an estimate of their heap)
	MaxBytes int64  // the bound
	Loads    uint64 // sections loaded from their index
	Evicted  uint64 // sections dropped, idle or over the bound
	Releases uint64 // hand-backs of freed memory to the operating system
}

// NewIndexCache returns a cache.
func NewIndexCache(opts IndexCacheOptions) *IndexCache {
	c := &IndexCache{max: opts.MaxBytes}
	if c.max <= 0 {
		c.max = DefaultIndexCacheBytes
	}
	return c
}

// Stats returns the gauges and counters.
func (c *IndexCache) Stats() IndexCacheStats {
	c.mu.Lock()
	releases := c.releases
	c.mu.Unlock()
	return IndexCacheStats{Bytes: c.bytes.Load(), MaxBytes: c.max, Loads: c.loads.Load(),
		Evicted: c.evicted.Load(), Releases: releases}
}

// Close cancels a scheduled hand-back and waits for one running. Logs
// still open keep working, without hand-backs.
func (c *IndexCache) Close() error {
	c.mu.Lock()
	c.closed = true
	if c.timer != nil && c.timer.Stop() {
		c.releasing = false
		c.wg.Done()
	}
	c.mu.Unlock()
	c.wg.Wait()
	return nil
}

// over reports whether the sections counted exceed the bound.
func (c *IndexCache) over() bool { return c.bytes.Load() > c.max }

// releaseSoon schedules a hand-back of freed memory to the operating
// system, unless one is scheduled already; it runs at least
// releaseInterval after the previous one, on a timer's goroutine, so
// the appender that asked never waits for the collection.
func (c *IndexCache) releaseSoon() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.releasing || c.closed {
		return
	}
	c.releasing = true
	c.wg.Add(1)
	delay := max(time.Until(c.lastFree.Add(releaseInterval)), 0)
	c.timer = time.AfterFunc(delay, func() {
		defer c.wg.Done()
		c.freed.Store(0)
		debug.FreeOSMemory()
		c.mu.Lock()
		c.releasing = false
		c.lastFree = time.Now()
		c.releases++
		c.mu.Unlock()
	})
}

// sectionBytes estimates the heap a loaded section holds: a meta per
// slot, a seq per live message and a map entry per subject.
func sectionBytes(s *section) int64 {
	const perSubject = 64 // map entry, slice header, the slice's spare room
	return int64(len(s.metas))*int64(unsafe.Sizeof(msgMeta{})) + int64(s.live)*8 + int64(len(s.bySubj))*perSubject
}

// noteLoad is catalog.onLoad: it counts the load and, for a sealed
// segment's section, has the appender check the bound. It runs under the
// section's loadMu, possibly under Log.mu: it only signals.
func (l *Log) noteLoad(seg *segment) {
	l.index.loads.Add(1)
	if !seg.sealed.Load() {
		return
	}
	select {
	case l.loadKick <- struct{}{}:
	default: // a check is pending already
	}
}

// accountSections brings what the Log's loaded sealed sections count in
// the index cache up to date. The appender calls it, after anything
// that loads, seals, drops or removes sections: it alone changes a
// section's size once it is loaded, so reading it here needs no lock
// (a section loaded by a reader is published by its loaded flag).
func (l *Log) accountSections() {
	var n int64
	if !l.memory {
		for _, seg := range l.cat.segs {
			if seg.sealed.Load() && seg.loaded.Load() {
				n += sectionBytes(&seg.section)
			}
		}
	}
	l.index.bytes.Add(n - l.indexCharged)
	if n < l.indexCharged {
		l.index.freed.Add(l.indexCharged - n)
	}
	l.indexCharged = n
}

// keepIndexBound drops the Log's least recently used sealed sections
// while the index cache is over its bound, keeping the one loaded or
// sealed last (its reader is about to use it). The appender calls it.
func (l *Log) keepIndexBound() {
	l.accountSections()
	if !l.index.over() {
		return
	}
	segs := l.evictable()
	slices.SortFunc(segs, func(a, b *segment) int {
		return cmp.Or(cmp.Compare(a.used.Load(), b.used.Load()), cmp.Compare(a.loadOrder.Load(), b.loadOrder.Load()))
	})
	if len(segs) > 0 {
		newest := slices.MaxFunc(segs, func(a, b *segment) int { return cmp.Compare(a.loadOrder.Load(), b.loadOrder.Load()) })
		segs = slices.DeleteFunc(segs, func(s *segment) bool { return s == newest })
	}
	excess := l.index.bytes.Load() - l.index.max
	k := 0
	for k < len(segs) && excess > 0 {
		excess -= sectionBytes(&segs[k].section)
		k++
	}
	l.evictSections(segs[:k])
	l.accountSections()
}

// evictIdleSections drops the sections unused for Options.EvictAfter and
// hands the memory back to the operating system when that was worth it.
// The appender calls it on its tick.
func (l *Log) evictIdleSections(now time.Time) {
	if l.opts.EvictAfter <= 0 {
		return
	}
	if l.evictIdle(now.Add(-l.opts.EvictAfter).UnixNano()) == 0 {
		return
	}
	l.accountSections()
	if l.index.freed.Load() >= releaseMin {
		l.index.releaseSoon()
	}
}

// freshenClock advances the clock, which stops with the appender's tick,
// and stamps the loaded sealed sections with it: with the tick stopped
// none was loaded (idle), so those there now were loaded since, by a
// reader still at work, and must not look unused since the tick stopped.
func (l *Log) freshenClock() {
	now := l.opts.Now().UnixNano()
	l.cat.clock.Store(now)
	for _, seg := range l.cat.segs {
		if seg.sealed.Load() && seg.loaded.Load() {
			seg.used.Store(now)
		}
	}
}
