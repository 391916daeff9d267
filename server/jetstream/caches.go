package jetstream

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/jetlog/vfs"
)

// Caches are the segment file cache and the index cache that several
// services share (Options.Caches): a server gives every account's
// JetStream the same ones, so the bounds on open files and on index
// memory hold for the whole server, not once per account. The owner (who
// called NewCaches) closes them after every service using them has shut
// down; a service never closes caches it was given.
type Caches struct {
	Files *jetlog.FileCache
	Index *jetlog.IndexCache
}

// CachesOptions configure NewCaches.
type CachesOptions struct {
	// Dir is the store directory whose LOCK file the file cache holds
	// (flock) while it is open, keeping a second process out of every
	// store that shares the caches. It is created (durably) if missing.
	Dir string
	// MaxOpenFiles bounds the files open at once; 0 means a quarter of
	// the process's descriptor limit, at least 16 and at most 1,024.
	MaxOpenFiles int
	// MaxIndexMemory bounds the per-message indexes of sealed segments;
	// 0 means jetlog.DefaultIndexCacheBytes.
	MaxIndexMemory int64
}

// NewCaches makes the caches and takes the store lock. Errors: the
// directory cannot be created, or the lock is held (errors.Is
// jetlog.ErrLocked).
func NewCaches(opts CachesOptions) (*Caches, error) {
	if err := vfs.MkdirAllDurable(vfs.OSFS{}, opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("jetstream: store %s: %w", opts.Dir, err)
	}
	files, err := jetlog.NewFileCache(jetlog.FileCacheOptions{
		MaxOpen: cmp.Or(opts.MaxOpenFiles, maxOpenFiles()), LockFile: filepath.Join(opts.Dir, "LOCK")})
	if err != nil {
		return nil, fmt.Errorf("jetstream: store %s: %w", opts.Dir, err)
	}
	return &Caches{Files: files, Index: jetlog.NewIndexCache(jetlog.IndexCacheOptions{MaxBytes: opts.MaxIndexMemory})}, nil
}

// Close releases the store lock and stops the caches' timers (waiting
// for one running). Call it after the services using the caches have
// shut down.
func (c *Caches) Close() error {
	return errors.Join(c.Files.Close(), c.Index.Close())
}
