//go:build !linux

package jetlog

import "os"

// datasync flushes the file; platforms without fdatasync use fsync.
func datasync(f *os.File) error { return f.Sync() }
