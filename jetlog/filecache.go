package jetlog

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// FileCache bounds the segment and consumer journal files open at once
// across every Log that shares it (Options.FileCache), so that file
// descriptors follow the working set, not the number of streams and
// consumers: a segment's file is opened when
// it is read or written and closed again, least recently used first, once
// more than MaxOpen are open, or once it has been idle for CloseIdleAfter
// (so that a restart with many streams holds no descriptor until
// something is read, and what was read once does not stay open). A file written since its last sync is never
// closed by the cache (a write-back error must reach the fsync that
// follows, which only the descriptor that wrote is sure to see; streams
// in DurabilityNone, which never sync, are exempt), nor one in use;
// MaxOpen is exceeded rather than an operation failed.
//
// Logs opened with a FileCache are not flocked one by one (that would
// take a descriptor per stream for as long as it is open): the cache
// refuses a second Open of the same directory in this process with
// ErrLocked, and other processes are kept out by the one lock the cache
// takes on FileCacheOptions.LockFile, if set. It is safe for concurrent
// use. The zero value is not usable: call NewFileCache.
type FileCache struct {
	max       int
	idleAfter time.Duration
	unlock    io.Closer // the LockFile lock, nil without one

	mu      sync.Mutex            // guards the fields below
	open    int                   // files open
	idle    list.List             // of *cachedFile: open, clean, unused; least recently used first
	claimed map[claimKey]struct{} // stream directories open through the cache
	stats   FileCacheStats
	// sweep, armed while idle files are open, closes those idle for
	// idleAfter; sweeps waits for one running (Close).
	sweep  *time.Timer
	sweeps sync.WaitGroup
	closed bool
}

// FileCacheOptions configure NewFileCache.
type FileCacheOptions struct {
	// MaxOpen bounds the files open at once; zero means
	// DefaultMaxOpenFiles.
	MaxOpen int
	// CloseIdleAfter closes a file unused for this long; zero means
	// DefaultCloseIdleAfter, negative keeps idle files open (up to
	// MaxOpen).
	CloseIdleAfter time.Duration
	// LockFile, if set, is locked (flock) for the cache's lifetime, so
	// that no other process opens the stores guarded by it; nil FS means
	// the OS's. A store directory's LOCK, for instance.
	LockFile string
	FS       FS
}

// DefaultMaxOpenFiles is the default FileCacheOptions.MaxOpen.
const DefaultMaxOpenFiles = 256

// DefaultCloseIdleAfter is the default FileCacheOptions.CloseIdleAfter.
const DefaultCloseIdleAfter = 30 * time.Second

// FileCacheStats are the cache's counters.
type FileCacheStats struct {
	Open    int    // files open now
	MaxOpen int    // the bound
	Opens   uint64 // files opened
	Evicted uint64 // files closed to stay within MaxOpen
	// ClosedIdle counts files closed for being unused CloseIdleAfter, or
	// after Open read them.
	ClosedIdle uint64
}

type claimKey struct {
	fs  FS
	dir string
}

// NewFileCache returns a cache. With LockFile set it fails with an error
// matching ErrLocked when another holder has it.
func NewFileCache(opts FileCacheOptions) (*FileCache, error) {
	c := &FileCache{max: opts.MaxOpen, idleAfter: opts.CloseIdleAfter, claimed: map[claimKey]struct{}{}}
	if c.max <= 0 {
		c.max = DefaultMaxOpenFiles
	}
	if c.idleAfter == 0 {
		c.idleAfter = DefaultCloseIdleAfter
	}
	if opts.LockFile != "" {
		fsys := opts.FS
		if fsys == nil {
			fsys = vfs.OSFS{}
		}
		lk, ok := fsys.(vfs.Locker)
		if !ok {
			return nil, fmt.Errorf("jetlog: file cache lock %q: the file system cannot lock", opts.LockFile)
		}
		unlock, err := lk.Lock(opts.LockFile)
		if err != nil {
			return nil, fmt.Errorf("jetlog: file cache lock %q: %w", opts.LockFile, err)
		}
		c.unlock = unlock
	}
	return c, nil
}

// Close releases the LockFile lock and stops closing idle files (a sweep
// running is waited for). Logs still open keep working.
func (c *FileCache) Close() error {
	c.mu.Lock()
	c.closed = true
	if c.sweep != nil && c.sweep.Stop() {
		c.sweeps.Done()
	}
	c.sweep = nil
	c.mu.Unlock()
	c.sweeps.Wait()
	if c.unlock == nil {
		return nil
	}
	err := c.unlock.Close()
	c.unlock = nil
	return err
}

// Stats returns the counters.
func (c *FileCache) Stats() FileCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Open, s.MaxOpen = c.open, c.max
	return s
}

// claim marks a stream directory open; release undoes it.
func (c *FileCache) claim(fsys FS, dir string) (io.Closer, error) {
	k := claimKey{fsys, path.Clean(dir)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.claimed[k]; ok {
		return nil, ErrLocked
	}
	c.claimed[k] = struct{}{}
	return closerFunc(func() error {
		c.mu.Lock()
		delete(c.claimed, k)
		c.mu.Unlock()
		return nil
	}), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// adopt takes over a file just created (open, empty, nothing to sync).
// With unsynced, the file is never synced (DurabilityNone), so it may be
// closed while written: there is no fsync for a write-back error to
// reach.
func (c *FileCache) adopt(fsys FS, name string, f vfs.File, unsynced bool) *cachedFile {
	cf := &cachedFile{c: c, fs: fsys, name: name, unsynced: unsynced}
	c.mu.Lock()
	cf.f = f
	c.open++
	c.stats.Opens++
	c.pushIdleLocked(cf)
	victims := c.evictLocked()
	c.mu.Unlock()
	closeAll(victims)
	return cf
}

// file returns the cached handle of an existing file. It is opened now,
// so that a missing one is an error here, not on first use, and closed
// again at once: a store of many streams opens holding no descriptor,
// and each file is opened again when first read or written.
func (c *FileCache) file(fsys FS, name string, unsynced bool) (*cachedFile, error) {
	f, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil { // never written through this descriptor
		return nil, err
	}
	c.mu.Lock()
	c.stats.Opens++
	c.mu.Unlock()
	return &cachedFile{c: c, fs: fsys, name: name, unsynced: unsynced}, nil
}

// pushIdleLocked puts an open, clean, unused file at the back of the idle
// list and arms the sweep that closes it once idle for idleAfter.
func (c *FileCache) pushIdleLocked(cf *cachedFile) {
	cf.idleSince = time.Now()
	cf.elem = c.idle.PushBack(cf)
	if c.sweep == nil && c.idleAfter > 0 && !c.closed {
		c.sweeps.Add(1)
		c.sweep = time.AfterFunc(c.idleAfter, c.closeIdle)
	}
}

// closeIdle is the sweep: it closes the files idle for idleAfter and arms
// itself again for the next one to become so.
func (c *FileCache) closeIdle() {
	defer c.sweeps.Done()
	c.mu.Lock()
	c.sweep = nil
	var out []vfs.File
	now := time.Now()
	for c.idle.Len() > 0 {
		cf := c.idle.Front().Value.(*cachedFile)
		if wait := cf.idleSince.Add(c.idleAfter).Sub(now); wait > 0 {
			if !c.closed {
				c.sweeps.Add(1)
				c.sweep = time.AfterFunc(wait, c.closeIdle)
			}
			break
		}
		c.idle.Remove(cf.elem)
		cf.elem = nil
		out = append(out, cf.f)
		cf.f = nil
		c.open--
		c.stats.ClosedIdle++
	}
	c.mu.Unlock()
	closeAll(out)
}

// evictLocked detaches the least recently used idle files while more
// than max are open; the caller closes them after unlocking.
func (c *FileCache) evictLocked() []vfs.File {
	var out []vfs.File
	for c.open > c.max && c.idle.Len() > 0 {
		cf := c.idle.Remove(c.idle.Front()).(*cachedFile)
		cf.elem = nil
		out = append(out, cf.f)
		cf.f = nil
		c.open--
		c.stats.Evicted++
	}
	return out
}

func closeAll(fs []vfs.File) {
	for _, f := range fs {
		_ = f.Close() // clean files (synced, or never written): nothing to lose
	}
}

// cachedFile is a vfs.File whose descriptor the cache may close while it
// is idle and reopens on next use.
type cachedFile struct {
	c        *FileCache
	fs       FS
	name     string
	unsynced bool // never synced: never dirty (see adopt)

	// Guarded by c.mu.
	f         vfs.File      // nil while closed
	users     int           // calls in flight
	dirty     bool          // written since the last successful Sync
	elem      *list.Element // in c.idle when open, unused and clean
	idleSince time.Time     // when it went into c.idle
	closed    bool          // Close was called
}

// get pins the file open for one call; write marks it dirty.
func (cf *cachedFile) get(write bool) (vfs.File, error) {
	cf.pin(write)
	f, err := cf.ensureOpen()
	if err != nil {
		cf.put(false)
		return nil, err
	}
	return f, nil
}

// hold pins the file open until unhold: a reader holds its segment's file
// from finding the segment (under Log.mu) to reading it, so that a
// segment removed meanwhile is still read through the descriptor, as
// without a cache. A failed open is left for the read to report.
func (cf *cachedFile) hold() {
	cf.pin(false)
	_, _ = cf.ensureOpen() // the read that follows retries and reports
}

func (cf *cachedFile) unhold() { cf.put(false) }

// drop closes the descriptor now if the file is idle (open, clean and
// unused): Open drops what recovery read, so a stream that is not used
// holds no descriptor.
func (cf *cachedFile) drop() {
	c := cf.c
	c.mu.Lock()
	if cf.elem == nil {
		c.mu.Unlock()
		return
	}
	c.idle.Remove(cf.elem)
	cf.elem = nil
	f := cf.f
	cf.f = nil
	c.open--
	c.stats.ClosedIdle++
	c.mu.Unlock()
	_ = f.Close() // clean: nothing to lose
}

// pin counts a user, which keeps the file from being evicted.
func (cf *cachedFile) pin(write bool) {
	c := cf.c
	c.mu.Lock()
	if cf.elem != nil {
		c.idle.Remove(cf.elem)
		cf.elem = nil
	}
	cf.users++
	if write && !cf.unsynced {
		cf.dirty = true
	}
	c.mu.Unlock()
}

// ensureOpen opens the file if the cache closed it. The caller pinned it.
func (cf *cachedFile) ensureOpen() (vfs.File, error) {
	c := cf.c
	c.mu.Lock()
	if cf.closed {
		c.mu.Unlock()
		return nil, fs.ErrClosed
	}
	if f := cf.f; f != nil {
		c.mu.Unlock()
		return f, nil
	}
	c.mu.Unlock()
	f, err := cf.fs.OpenFile(cf.name, os.O_RDWR, 0) // outside the lock: I/O
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	var extra []vfs.File
	switch {
	case cf.closed:
		c.mu.Unlock()
		_ = f.Close() // never used
		return nil, fs.ErrClosed
	case cf.f != nil: // opened meanwhile by another user
		extra = append(extra, f)
	default:
		cf.f = f
		c.open++
		c.stats.Opens++
	}
	f = cf.f
	extra = append(extra, c.evictLocked()...)
	c.mu.Unlock()
	closeAll(extra)
	return f, nil
}

// put unpins; synced clears the dirty mark (a successful Sync).
func (cf *cachedFile) put(synced bool) {
	c := cf.c
	c.mu.Lock()
	cf.users--
	if synced {
		cf.dirty = false
	}
	var victims []vfs.File
	if cf.users == 0 && !cf.dirty && cf.f != nil && !cf.closed {
		c.pushIdleLocked(cf)
		victims = c.evictLocked()
	}
	c.mu.Unlock()
	closeAll(victims)
}

func (cf *cachedFile) ReadAt(p []byte, off int64) (int, error) {
	f, err := cf.get(false)
	if err != nil {
		return 0, err
	}
	defer cf.put(false)
	return f.ReadAt(p, off)
}

func (cf *cachedFile) WriteAt(p []byte, off int64) (int, error) {
	f, err := cf.get(true)
	if err != nil {
		return 0, err
	}
	defer cf.put(false)
	return f.WriteAt(p, off)
}

func (cf *cachedFile) Write(p []byte) (int, error) {
	f, err := cf.get(true)
	if err != nil {
		return 0, err
	}
	defer cf.put(false)
	return f.Write(p)
}

func (cf *cachedFile) Truncate(size int64) error {
	f, err := cf.get(true)
	if err != nil {
		return err
	}
	defer cf.put(false)
	return f.Truncate(size)
}

// Allocate implements vfs.Allocator when the file underneath does.
func (cf *cachedFile) Allocate(size int64) error {
	f, err := cf.get(true)
	if err != nil {
		return err
	}
	defer cf.put(false)
	a, ok := f.(vfs.Allocator)
	if !ok {
		return errors.ErrUnsupported
	}
	return a.Allocate(size)
}

func (cf *cachedFile) Sync() error {
	f, err := cf.get(false)
	if err != nil {
		return err
	}
	err = f.Sync()
	cf.put(err == nil)
	return err
}

func (cf *cachedFile) Stat() (fs.FileInfo, error) {
	f, err := cf.get(false)
	if err != nil {
		return nil, err
	}
	defer cf.put(false)
	return f.Stat()
}

// Close closes the descriptor, if open, and forgets the file. No call may
// be in flight (a segment closes its file when its last reader is done).
func (cf *cachedFile) Close() error {
	c := cf.c
	c.mu.Lock()
	if cf.closed {
		c.mu.Unlock()
		return fs.ErrClosed
	}
	cf.closed = true
	f := cf.f
	cf.f = nil
	if cf.elem != nil {
		c.idle.Remove(cf.elem)
		cf.elem = nil
	}
	if f != nil {
		c.open--
	}
	c.mu.Unlock()
	if f == nil {
		return nil
	}
	return f.Close()
}
