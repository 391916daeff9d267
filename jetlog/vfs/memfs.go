package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemFS is an in-memory FS. Memory streams use a volatile one; tests use a
// crashable one (NewMemFS) to inject faults (SetFault) and to simulate a
// power cut (CrashClone). A crashable MemFS remembers, per file, which
// bytes were synced and, per directory, which entries were synced, and
// follows the durability rules of the package doc strictly. Safe for
// concurrent use.
//
// Paths are slash-separated; "/" and "." are the roots of two separate
// trees that always exist.
type MemFS struct {
	mu    sync.Mutex         // guards the fields below and every memNode
	roots map[string]*memDir // "/" and "."
	fault func(op, name string) error
	locks map[string]bool // held Lock names
	track bool            // remember synced state (false for volatile: cheaper)
}

// memDir is a directory: its entries now and as of its last SyncDir.
type memDir struct {
	entries map[string]*memNode
	synced  map[string]*memNode // nil when untracked
}

// memNode is a directory (dir set) or a file.
type memNode struct {
	dir *memDir

	data      []byte
	synced    []byte // content as of the last Sync
	dirtyFrom int    // lowest offset written since the last Sync
}

var errNotEmpty = errors.New("directory not empty")
var errIsDir = errors.New("is a directory")
var errNotDir = errors.New("not a directory")

// NewMemFS returns an empty, crashable MemFS: it tracks what was synced,
// so CrashClone can drop the rest.
func NewMemFS() *MemFS { return newMemFS(true) }

// NewVolatileMemFS returns an empty MemFS that keeps no synced state,
// which halves the memory a stream on it needs. Its CrashClone is empty:
// everything on it is lost in a crash, as in RAM.
func NewVolatileMemFS() *MemFS { return newMemFS(false) }

func newMemFS(track bool) *MemFS {
	m := &MemFS{roots: map[string]*memDir{}, track: track}
	m.roots["/"] = m.newDir()
	m.roots["."] = m.newDir()
	return m
}

func (m *MemFS) newDir() *memDir {
	d := &memDir{entries: map[string]*memNode{}}
	if m.track {
		d.synced = map[string]*memNode{}
	}
	return d
}

// Lock implements Locker. Locks do not survive CrashClone, as a process's
// locks do not survive its death.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = path.Clean(name)
	if m.locks[name] {
		return nil, fmt.Errorf("lock %q: %w", name, ErrLocked)
	}
	if m.locks == nil {
		m.locks = map[string]bool{}
	}
	m.locks[name] = true
	return memLock{m, name}, nil
}

type memLock struct {
	m    *MemFS
	name string
}

func (l memLock) Close() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	delete(l.m.locks, l.name)
	return nil
}

// SetFault installs a hook called before every operation with the
// operation ("open", "create", "write", "sync", "truncate", "rename",
// "remove", "mkdir", "syncdir") and the file name. A non-nil error fails
// the operation; a failed write first writes half of its bytes, as a full
// disk may. nil removes the hook.
func (m *MemFS) SetFault(fn func(op, name string) error) {
	m.mu.Lock()
	m.fault = fn
	m.mu.Unlock()
}

// CrashClone returns a copy of m as it would be found after a power cut:
// only durable directory entries (those present at their directory's last
// SyncDir, inside directories that are durable themselves) and synced
// bytes survive. With a non-nil rng, each surviving file also keeps a
// random prefix of its unsynced appended bytes, as a real disk may. A
// volatile MemFS clones empty.
func (m *MemFS) CrashClone(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := newMemFS(true)
	if !m.track {
		return c
	}
	for name, d := range m.roots {
		c.roots[name] = c.cloneDurable(d, rng)
	}
	return c
}

// cloneDurable copies the durable part of d; m.mu is held.
func (c *MemFS) cloneDurable(d *memDir, rng *rand.Rand) *memDir {
	nd := c.newDir()
	for name, n := range d.synced {
		var nn *memNode
		if n.dir != nil {
			nn = &memNode{dir: c.cloneDurable(n.dir, rng)}
		} else {
			data := slices.Clone(n.synced)
			if rng != nil && len(n.data) > len(n.synced) && n.dirtyFrom >= len(n.synced) {
				extra := rng.IntN(len(n.data) - len(n.synced) + 1)
				data = append(data, n.data[len(n.synced):len(n.synced)+extra]...)
			}
			nn = &memNode{data: data, synced: slices.Clone(data), dirtyFrom: len(data)}
		}
		nd.entries[name] = nn
		nd.synced[name] = nn
	}
	return nd
}

func (m *MemFS) check(op, name string) error {
	if m.fault != nil {
		if err := m.fault(op, name); err != nil {
			return &fs.PathError{Op: op, Path: name, Err: err}
		}
	}
	return nil
}

// dir returns the directory at p; m.mu is held.
func (m *MemFS) dir(op, p string) (*memDir, error) {
	p = path.Clean(p)
	root, rest := ".", p
	if strings.HasPrefix(p, "/") {
		root, rest = "/", p[1:]
	}
	d := m.roots[root]
	if rest == "" || rest == "." {
		return d, nil
	}
	for tok := range strings.SplitSeq(rest, "/") {
		n, ok := d.entries[tok]
		switch {
		case !ok:
			return nil, &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
		case n.dir == nil:
			return nil, &fs.PathError{Op: op, Path: p, Err: errNotDir}
		}
		d = n.dir
	}
	return d, nil
}

// parent returns the directory holding name and name's base; m.mu is
// held. The roots have no parent.
func (m *MemFS) parent(op, name string) (*memDir, string, error) {
	name = path.Clean(name)
	if name == "/" || name == "." {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	}
	d, err := m.dir(op, path.Dir(name))
	if err != nil {
		return nil, "", err
	}
	return d, path.Base(name), nil
}

// OpenFile implements FS.
func (m *MemFS) OpenFile(name string, flag int, _ fs.FileMode) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	op := "open"
	if flag&os.O_CREATE != 0 {
		op = "create"
	}
	if err := m.check(op, name); err != nil {
		return nil, err
	}
	d, base, err := m.parent(op, name)
	if err != nil {
		return nil, err
	}
	n, ok := d.entries[base]
	switch {
	case !ok && flag&os.O_CREATE == 0:
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrExist}
	case ok && n.dir != nil:
		return nil, &fs.PathError{Op: op, Path: name, Err: errIsDir}
	case !ok:
		n = &memNode{}
		d.entries[base] = n
	}
	if flag&os.O_TRUNC != 0 {
		n.data = n.data[:0]
		n.dirtyFrom = 0
	}
	f := &memFile{fs: m, node: n, name: path.Clean(name)}
	if flag&os.O_APPEND != 0 {
		f.off = int64(len(n.data))
	}
	return f, nil
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	return m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// Rename implements FS. A directory may be renamed; a non-empty directory
// is never replaced.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("rename", newname); err != nil {
		return err
	}
	od, ob, err := m.parent("rename", oldname)
	if err != nil {
		return err
	}
	nd, nb, err := m.parent("rename", newname)
	if err != nil {
		return err
	}
	n, ok := od.entries[ob]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	if old, ok := nd.entries[nb]; ok && old.dir != nil && len(old.dir.entries) > 0 {
		return &fs.PathError{Op: "rename", Path: newname, Err: errNotEmpty}
	}
	delete(od.entries, ob)
	nd.entries[nb] = n
	return nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("remove", name); err != nil {
		return err
	}
	d, base, err := m.parent("remove", name)
	if err != nil {
		return err
	}
	n, ok := d.entries[base]
	switch {
	case !ok:
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	case n.dir != nil && len(n.dir.entries) > 0:
		return &fs.PathError{Op: "remove", Path: name, Err: errNotEmpty}
	}
	delete(d.entries, base)
	return nil
}

// ReadDir implements FS.
func (m *MemFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.dir("readdir", dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(d.entries))
	for name := range d.entries {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// Mkdir implements FS. The new directory is durable only after SyncDir of
// its parent.
func (m *MemFS) Mkdir(dir string, _ fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("mkdir", dir); err != nil {
		return err
	}
	d, base, err := m.parent("mkdir", dir)
	if err != nil {
		return err
	}
	if _, ok := d.entries[base]; ok {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: fs.ErrExist}
	}
	d.entries[base] = &memNode{dir: m.newDir()}
	return nil
}

// MkdirAll implements FS. No directory it creates is durable before
// SyncDir of its parent (see MkdirAllDurable).
func (m *MemFS) MkdirAll(dir string, _ fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("mkdir", dir); err != nil {
		return err
	}
	p := path.Clean(dir)
	root, rest := ".", p
	if strings.HasPrefix(p, "/") {
		root, rest = "/", p[1:]
	}
	d := m.roots[root]
	if rest == "" || rest == "." {
		return nil
	}
	for tok := range strings.SplitSeq(rest, "/") {
		n, ok := d.entries[tok]
		switch {
		case !ok:
			n = &memNode{dir: m.newDir()}
			d.entries[tok] = n
		case n.dir == nil:
			return &fs.PathError{Op: "mkdir", Path: dir, Err: errNotDir}
		}
		d = n.dir
	}
	return nil
}

// SyncDir implements FS.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("syncdir", dir); err != nil {
		return err
	}
	d, err := m.dir("syncdir", dir)
	if err != nil {
		return err
	}
	if m.track {
		d.synced = make(map[string]*memNode, len(d.entries))
		for name, n := range d.entries {
			d.synced[name] = n
		}
	}
	return nil
}

type memFile struct {
	fs     *MemFS
	node   *memNode
	name   string
	off    int64
	closed bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, fs.ErrClosed
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.writeAtLocked(p, off)
}

func (f *memFile) writeAtLocked(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, fs.ErrClosed
	}
	if err := f.fs.check("write", f.name); err != nil {
		half := p[:len(p)/2]
		f.put(half, off)
		return len(half), err
	}
	f.put(p, off)
	return len(p), nil
}

func (f *memFile) put(p []byte, off int64) {
	n := f.node
	end := int(off) + len(p)
	if end > len(n.data) {
		old := len(n.data)
		n.data = slices.Grow(n.data, end-old)[:end]
		clear(n.data[old:])
	}
	copy(n.data[off:], p)
	n.dirtyFrom = min(n.dirtyFrom, int(off))
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	n, err := f.writeAtLocked(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	if err := f.fs.check("sync", f.name); err != nil {
		return err
	}
	if !f.fs.track {
		return nil
	}
	n := f.node
	from := min(n.dirtyFrom, len(n.synced), len(n.data))
	n.synced = append(n.synced[:from], n.data[from:]...)
	n.dirtyFrom = len(n.data)
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	if err := f.fs.check("truncate", f.name); err != nil {
		return err
	}
	n := f.node
	if int(size) <= len(n.data) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, int(size)-len(n.data))...)
	}
	n.dirtyFrom = min(n.dirtyFrom, int(size))
	return nil
}

// Allocate implements Allocator: the file grows by zeros, which become
// durable with the next Sync like written bytes.
func (f *memFile) Allocate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	if err := f.fs.check("allocate", f.name); err != nil {
		return err
	}
	n := f.node
	if int(size) > len(n.data) {
		n.dirtyFrom = min(n.dirtyFrom, len(n.data))
		n.data = append(n.data, make([]byte, int(size)-len(n.data))...)
	}
	return nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return fs.ErrClosed
	}
	f.closed = true
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return memInfo{name: path.Base(f.name), size: int64(len(f.node.data))}, nil
}

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
