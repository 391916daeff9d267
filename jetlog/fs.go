package jetlog

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// FS is the file-system seam: everything jetlog does to disk goes through
// it, so tests can inject faults (ENOSPC, failed fsync) or simulate power
// loss (see MemFS). Implementations must be safe for concurrent use.
type FS interface {
	// OpenFile opens name with os.O_* flags.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Create creates or truncates name for reading and writing.
	Create(name string) (File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	// ReadDir returns the sorted names in dir.
	ReadDir(dir string) ([]string, error)
	MkdirAll(dir string, perm fs.FileMode) error
	// SyncDir makes the directory's entries (creates, renames, removes)
	// durable.
	SyncDir(dir string) error
}

// File is an open file of an FS. Sync must make the data durable (an
// fdatasync is enough: jetlog never depends on durable metadata other than
// the size, which fdatasync covers).
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
	Stat() (fs.FileInfo, error)
}

// Locker is implemented by file systems that can stop a second Log (in
// this process or another) from opening a stream directory. Lock returns
// ErrLocked if name is already locked; closing the result unlocks.
type Locker interface {
	Lock(name string) (io.Closer, error)
}

// OSFS is the operating system's file system.
type OSFS struct{}

var _ FS = OSFS{}

// OpenFile implements FS.
func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// Create implements FS.
func (o OSFS) Create(name string) (File, error) {
	return o.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

// Rename implements FS.
func (OSFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(dir string, perm fs.FileMode) error { return os.MkdirAll(dir, perm) }

// ReadDir implements FS.
func (OSFS) ReadDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names, nil
}

// SyncDir implements FS.
func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		_ = d.Close() // the sync error is the one that matters
		return err
	}
	return d.Close()
}

type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }
