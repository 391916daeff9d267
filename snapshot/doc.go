// Package snapshot is bus's backup format (docs/backup.md, "Format"): a
// stream of messages and their metadata, not a copy of the store's
// files. The server writes it into a STREAM.SNAPSHOT's chunks and reads
// it back in a STREAM.RESTORE (server/jetstream); `bus backup` and `bus
// restore` (cmd/bus) read it to check a backup and to join a full backup
// and its increments before they send it.
//
// format.go holds the record framing (Writer, Reader); read.go the
// checks a whole snapshot must pass (Read). The package is pure: no
// sockets, no files of its own, no goroutines.
package snapshot
