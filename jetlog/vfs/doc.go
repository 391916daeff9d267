// Package vfs is the file-system seam of jetlog: the FS and File
// interfaces everything on disk goes through, OSFS (the operating
// system's), and MemFS, an in-memory FS that can inject faults and
// simulate a power cut.
//
// # Durability rules
//
// Both implementations follow strict POSIX, and MemFS enforces it so tests
// find what a real power cut would:
//
//   - A file's bytes are durable only after File.Sync.
//   - A new name (a created file, a new directory, the target of a
//     rename) and the disappearance of a name (a remove, the source of a
//     rename) are durable only after SyncDir of the directory holding the
//     name.
//   - A directory that is not durable takes everything inside it along
//     when it is lost, synced files included.
//
// MkdirAllDurable creates a directory path and makes each new entry
// durable, which is what a caller needs before it acknowledges anything
// stored inside.
//
// MemFS.CrashClone returns what a power cut at that moment would leave:
// exactly the durable entries and bytes (plus, if asked, a random prefix
// of unsynced appended bytes per file, as a disk may write some back
// early). Directory entries are never kinder than the rules above.
//
// The package imports only the standard library (and x/sys for fdatasync
// and flock on Linux).
package vfs
