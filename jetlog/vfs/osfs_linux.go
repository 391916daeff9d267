package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes the file's data and size, not its timestamps.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// Allocate implements Allocator with fallocate, which also sets the size:
// the blocks are reserved as unwritten extents, which read as zeros.
func (f osFile) Allocate(size int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, 0, size)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// Lock implements Locker with an exclusive, non-blocking flock. The kernel
// drops it when the process dies, so a crash never leaves a stale lock.
func (OSFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close() // the lock error is the one that matters
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %q: %w", name, ErrLocked)
		}
		return nil, fmt.Errorf("lock %q: %w", name, err)
	}
	return f, nil
}
