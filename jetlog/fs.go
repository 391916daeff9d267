package jetlog

import "github.com/bus-dev/bus/jetlog/vfs"

// FS is the file-system seam everything jetlog does to disk goes through
// (see package vfs for the interface, OSFS and the crashable MemFS). It is
// an alias, so any vfs.FS, or nil for the operating system's, can be
// passed where jetlog takes one.
type FS = vfs.FS
