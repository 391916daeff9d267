//go:build !linux

package vfs

import (
	"errors"
	"os"
)

// datasync flushes the file; platforms without fdatasync use fsync.
func datasync(f *os.File) error { return f.Sync() }

// Allocate implements Allocator: other platforms do not reserve space.
func (osFile) Allocate(int64) error { return errors.ErrUnsupported }
