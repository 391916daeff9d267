package jetstream

import (
	"errors"
	"io/fs"
	"os"
	"path"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/jetlog/vfs"
)

// A restored stream is built aside, in the restore's staging directory,
// and only renamed into the store once it is whole. Until that rename no
// reader, and no recovery, ever looks at it: a crash leaves a staging
// directory that the next start throws away. So the log that builds it
// need not make each step durable as it goes, as a live stream's must
// (each metadata write of jetlog is a tmp file, an fdatasync, a rename and
// a directory fsync: about 27 syncs for a stream of ten messages, which
// made restoring many small streams slow, 93 ms a stream against the
// reference's 29). The build runs on deferredSyncFS, whose syncs do
// nothing, and syncTree then makes the finished tree durable in one pass,
// before the rename publishes it.

// deferredSyncFS is an FS whose Sync and SyncDir do nothing.
type deferredSyncFS struct{ vfs.FS }

func (d deferredSyncFS) SyncDir(string) error { return nil }

func (d deferredSyncFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := d.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return deferredSyncFile{f}, nil
}

func (d deferredSyncFS) Create(name string) (vfs.File, error) {
	f, err := d.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return deferredSyncFile{f}, nil
}

// deferredSyncFile keeps its file's preallocation (vfs.Allocator): the
// segments are the same files a live stream appends to afterwards.
type deferredSyncFile struct{ vfs.File }

func (deferredSyncFile) Sync() error { return nil }

func (f deferredSyncFile) Allocate(size int64) error {
	if a, ok := f.File.(vfs.Allocator); ok {
		return a.Allocate(size)
	}
	return errors.ErrUnsupported
}

// buildOptions are the options of the log that builds a restored stream:
// the store's, on deferred syncs, and without the shared file cache (whose
// handles would bypass the deferral; the build holds its few files open).
func (sh *shared) buildOptions() jetlog.Options {
	o := sh.logOptions()
	o.FS = deferredSyncFS{baseFS(o.FS)}
	o.FileCache = nil
	return o
}

func baseFS(f vfs.FS) vfs.FS {
	if f == nil {
		return vfs.OSFS{}
	}
	return f
}

// syncTree makes dir and everything under it durable: every file's data,
// every directory's entries, and dir's own entry in its parent.
func syncTree(fsys vfs.FS, dir string) error {
	if err := syncEntries(fsys, dir); err != nil {
		return err
	}
	return fsys.SyncDir(path.Dir(dir))
}

// syncEntries syncs the files and directories under dir, then dir.
func syncEntries(fsys vfs.FS, dir string) error {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		p := path.Join(dir, name)
		isDir, err := syncFile(fsys, p)
		if err != nil {
			return err
		}
		if isDir {
			if err := syncEntries(fsys, p); err != nil {
				return err
			}
		}
	}
	return fsys.SyncDir(dir)
}

// syncFile syncs the file p, or reports that p is a directory (which
// some file systems refuse to open as a file and others open).
func syncFile(fsys vfs.FS, p string) (isDir bool, err error) {
	f, err := fsys.OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		if _, derr := fsys.ReadDir(p); derr == nil {
			return true, nil
		}
		return false, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return true, nil
	}
	return false, f.Sync()
}
