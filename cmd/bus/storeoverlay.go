package main

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"sync"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// overlayFS lets jetlog open a store read-only: it reads the files on
// disk, and whatever recovery would write (an index rebuilt, a torn tail
// cut, the clean-shutdown marker, a seq mark) goes to memory instead, a
// file being copied there on its first write. So `bus store verify` and
// `bus store info` run jetlog's own recovery and checks and leave every
// byte of the store as it was. Nothing here is durable: SyncDir does
// nothing, and it offers no Locker (the caller checks the store's LOCK).
type overlayFS struct {
	mu      sync.Mutex
	mem     *vfs.MemFS
	removed map[string]bool // names removed (or renamed away) from the disk's view
}

func newOverlayFS() *overlayFS {
	return &overlayFS{mem: vfs.NewVolatileMemFS(), removed: map[string]bool{}}
}

// inMem says whether name has an in-memory version.
func (o *overlayFS) inMem(name string) bool {
	f, err := o.mem.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}

func (o *overlayFS) onDisk(name string) bool {
	if o.removed[path.Clean(name)] {
		return false
	}
	_, err := os.Stat(name)
	return err == nil
}

// copyUp puts the disk's name into memory, once.
func (o *overlayFS) copyUp(name string) error {
	if o.inMem(name) {
		return nil
	}
	if err := o.mem.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	dst, err := o.mem.Create(name)
	if err != nil {
		return err
	}
	defer dst.Close()
	if !o.onDisk(name) {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	_, err = dst.Write(b)
	return err
}

func (o *overlayFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	name = path.Clean(name)
	if o.inMem(name) {
		return o.mem.OpenFile(name, flag, perm)
	}
	exists := o.onDisk(name)
	if !exists && flag&os.O_CREATE == 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if exists && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	}
	if !exists || flag&os.O_TRUNC != 0 {
		if err := o.mem.MkdirAll(path.Dir(name), 0o755); err != nil {
			return nil, err
		}
		delete(o.removed, name)
		return o.mem.OpenFile(name, flag|os.O_CREATE, perm)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return &overlayFile{o: o, name: name, flag: flag, disk: f}, nil
}

func (o *overlayFS) Create(name string) (vfs.File, error) {
	return o.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (o *overlayFS) Rename(oldname, newname string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	oldname, newname = path.Clean(oldname), path.Clean(newname)
	if err := o.copyUp(oldname); err != nil {
		return err
	}
	if err := o.mem.MkdirAll(path.Dir(newname), 0o755); err != nil {
		return err
	}
	o.removed[oldname] = true
	delete(o.removed, newname)
	return o.mem.Rename(oldname, newname)
}

func (o *overlayFS) Remove(name string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	name = path.Clean(name)
	found := false
	if o.inMem(name) {
		if err := o.mem.Remove(name); err != nil {
			return err
		}
		found = true
	}
	if o.onDisk(name) {
		o.removed[name] = true
		found = true
	}
	if !found {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	return nil
}

func (o *overlayFS) ReadDir(dir string) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	dir = path.Clean(dir)
	names := map[string]bool{}
	disk, derr := os.ReadDir(dir)
	for _, e := range disk {
		if !o.removed[path.Join(dir, e.Name())] {
			names[e.Name()] = true
		}
	}
	mem, merr := o.mem.ReadDir(dir)
	for _, n := range mem {
		names[n] = true
	}
	if derr != nil && merr != nil {
		return nil, derr
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (o *overlayFS) Mkdir(dir string, perm fs.FileMode) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if st, err := os.Stat(dir); err == nil && st.IsDir() && !o.removed[path.Clean(dir)] {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: fs.ErrExist}
	}
	if err := o.mem.MkdirAll(path.Dir(dir), 0o755); err != nil {
		return err
	}
	return o.mem.Mkdir(dir, perm)
}

func (o *overlayFS) MkdirAll(dir string, perm fs.FileMode) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mem.MkdirAll(dir, perm)
}

func (o *overlayFS) SyncDir(string) error { return nil }

// overlayFile reads the disk's file until its first write, which moves
// it to memory.
type overlayFile struct {
	o    *overlayFS
	name string
	flag int
	disk *os.File
	mem  vfs.File
	off  int64 // Write's position (files are not opened O_APPEND by jetlog)
}

func (f *overlayFile) up() error {
	if f.mem != nil {
		return nil
	}
	f.o.mu.Lock()
	defer f.o.mu.Unlock()
	if err := f.o.copyUp(f.name); err != nil {
		return err
	}
	m, err := f.o.mem.OpenFile(f.name, f.flag&^(os.O_CREATE|os.O_TRUNC|os.O_EXCL), 0)
	if err != nil {
		return err
	}
	f.mem = m
	return nil
}

func (f *overlayFile) ReadAt(p []byte, off int64) (int, error) {
	if f.mem != nil {
		return f.mem.ReadAt(p, off)
	}
	return f.disk.ReadAt(p, off)
}

func (f *overlayFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.up(); err != nil {
		return 0, err
	}
	return f.mem.WriteAt(p, off)
}

func (f *overlayFile) Write(p []byte) (int, error) {
	if err := f.up(); err != nil {
		return 0, err
	}
	if f.flag&os.O_APPEND != 0 {
		return f.mem.Write(p)
	}
	n, err := f.mem.WriteAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *overlayFile) Sync() error { return nil }

func (f *overlayFile) Truncate(size int64) error {
	if err := f.up(); err != nil {
		return err
	}
	return f.mem.Truncate(size)
}

func (f *overlayFile) Close() error {
	err := f.disk.Close()
	if f.mem != nil {
		err = errors.Join(err, f.mem.Close())
	}
	return err
}

func (f *overlayFile) Stat() (fs.FileInfo, error) {
	if f.mem != nil {
		return f.mem.Stat()
	}
	return f.disk.Stat()
}
