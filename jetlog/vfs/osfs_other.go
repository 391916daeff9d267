//go:build !linux

package vfs

import "os"

// datasync flushes the file; platforms without fdatasync use fsync.
func datasync(f *os.File) error { return f.Sync() }
