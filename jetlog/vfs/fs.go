package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
)

// FS is a file system. Implementations must be safe for concurrent use.
// Errors for missing or existing names match fs.ErrNotExist and
// fs.ErrExist with errors.Is.
type FS interface {
	// OpenFile opens name with os.O_* flags.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Create creates or truncates name for reading and writing.
	Create(name string) (File, error)
	// Rename replaces newname with oldname. Both names change durably only
	// after SyncDir of their directories.
	Rename(oldname, newname string) error
	// Remove deletes a file or an empty directory; durable after SyncDir
	// of its parent.
	Remove(name string) error
	// ReadDir returns the sorted names in dir.
	ReadDir(dir string) ([]string, error)
	// Mkdir creates one directory; its parent must exist. It fails with
	// fs.ErrExist if dir exists. The new entry is durable only after
	// SyncDir of the parent (see MkdirAllDurable).
	Mkdir(dir string, perm fs.FileMode) error
	// MkdirAll creates dir and any missing parents, none of them durably.
	MkdirAll(dir string, perm fs.FileMode) error
	// SyncDir makes the directory's entries (creates, renames, removes,
	// new subdirectories) durable.
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

// Allocator is implemented by files that can reserve space ahead of the
// writes that fill it. Allocate makes the file at least size bytes long,
// the new bytes reading as zeros, with their blocks reserved, so that a
// later write inside them changes no allocation and its fdatasync has
// less metadata to commit. It never shrinks the file. ErrUnsupported
// says the platform cannot; other errors (a full disk) leave the file as
// it was, or longer by zeros.
type Allocator interface {
	Allocate(size int64) error
}

// Locker is implemented by file systems that can stop a second holder (in
// this process or another) from locking the same name. Lock returns an
// error matching ErrLocked if name is already locked; closing the result
// unlocks.
type Locker interface {
	Lock(name string) (io.Closer, error)
}

// ErrLocked is returned by Locker.Lock when the name is locked already.
var ErrLocked = errors.New("vfs: locked by another holder")

// MkdirAllDurable creates dir and any missing parents, and makes every
// entry it created durable: it syncs the parent of each new directory,
// from the deepest up to the first directory that already existed. A
// directory that already exists is left as it is (nothing is synced). On
// failure it removes, as far as it can, the directories it created, so a
// retry starts over and syncs them again.
func MkdirAllDurable(fsys FS, dir string, perm fs.FileMode) error {
	dir = path.Clean(dir)
	var missing []string // deepest first, not created yet
	var created []string // deepest first
	for d := dir; ; d = path.Dir(d) {
		err := fsys.Mkdir(d, perm)
		if err == nil {
			created = append(created, d)
			break
		}
		if errors.Is(err, fs.ErrExist) {
			if d == dir {
				return nil
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || path.Dir(d) == d {
			return fmt.Errorf("vfs: mkdir %q: %w", dir, err)
		}
		missing = append(missing, d)
	}
	undo := func(err error) error {
		for _, d := range created {
			_ = fsys.Remove(d) // best effort; err is the error that matters
		}
		return fmt.Errorf("vfs: mkdir %q: %w", dir, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := fsys.Mkdir(missing[i], perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return undo(err)
		}
		created = append([]string{missing[i]}, created...)
	}
	for _, d := range created {
		if err := fsys.SyncDir(path.Dir(d)); err != nil {
			return undo(err)
		}
	}
	return nil
}
