package tests

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// faultFS is the operating system's file system with faults switched on
// and off per directory while a server runs on it (server.Options.StoreFS).
// A fault covers every name under its directory and is checked at each
// call, so files opened before it was set fail too. Two kinds:
//
//   - syscall.ENOSPC, a full disk: a write stores half its bytes and
//     fails (as a write that runs out of blocks does), creating a file or
//     a directory and growing a file fail; shrinking, renaming, removing
//     and syncing still work (they need no new blocks).
//   - syscall.EROFS, a read-only store: every change fails (writes,
//     truncates, creates, renames, removes, mkdirs); reads and syncs of
//     files already open work.
//
// It is safe for concurrent use.
type faultFS struct {
	vfs.OSFS
	mu      sync.Mutex       // guards faults and budgets
	faults  map[string]error // by directory (cleaned)
	budgets map[string]int   // writes left before the disk fills, by directory
}

func newFaultFS() *faultFS { return &faultFS{faults: map[string]error{}, budgets: map[string]int{}} }

// fillAfter lets n more writes (Write or WriteAt calls) succeed under dir;
// the one after finds the disk full, as set(dir, ENOSPC) does from then
// on. It cuts a multi-step operation at its n-th write.
func (f *faultFS) fillAfter(dir string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.budgets[filepath.Clean(dir)] = n
}

// spend counts a write to name against the budget of its directory or
// one above it, filling the disk when the budget is spent.
func (f *faultFS) spend(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for d := filepath.Clean(name); ; d = filepath.Dir(d) {
		if n, ok := f.budgets[d]; ok {
			if n == 0 {
				delete(f.budgets, d)
				f.faults[d] = syscall.ENOSPC
			} else {
				f.budgets[d] = n - 1
			}
			return
		}
		if filepath.Dir(d) == d {
			return
		}
	}
}

// set makes every change under dir fail with err; a nil err clears it.
func (f *faultFS) set(dir string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.faults, filepath.Clean(dir))
		return
	}
	f.faults[filepath.Clean(dir)] = err
}

// fault is the error set for name's directory or one above it, or nil.
func (f *faultFS) fault(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for d := filepath.Clean(name); ; d = filepath.Dir(d) {
		if err, ok := f.faults[d]; ok {
			return err
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if err := f.fault(name); err != nil && flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) != 0 {
		_, statErr := os.Stat(name)
		// A full disk still opens an existing file for writing.
		if errors.Is(err, syscall.EROFS) || flag&(os.O_CREATE|os.O_TRUNC) != 0 && statErr != nil {
			return nil, pathErr("open", name, err)
		}
	}
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *faultFS) Create(name string) (vfs.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (f *faultFS) Rename(oldname, newname string) error {
	if err := f.fault(newname); errors.Is(err, syscall.EROFS) {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return f.OSFS.Rename(oldname, newname)
}

func (f *faultFS) Remove(name string) error {
	if err := f.fault(name); errors.Is(err, syscall.EROFS) {
		return pathErr("remove", name, err)
	}
	return f.OSFS.Remove(name)
}

func (f *faultFS) Mkdir(dir string, perm fs.FileMode) error {
	if err := f.fault(dir); err != nil {
		if _, statErr := os.Stat(dir); statErr == nil {
			return pathErr("mkdir", dir, fs.ErrExist)
		}
		return pathErr("mkdir", dir, err)
	}
	return f.OSFS.Mkdir(dir, perm)
}

func (f *faultFS) MkdirAll(dir string, perm fs.FileMode) error {
	if err := f.fault(dir); err != nil {
		if st, statErr := os.Stat(dir); statErr == nil && st.IsDir() {
			return nil
		}
		return pathErr("mkdir", dir, err)
	}
	return f.OSFS.MkdirAll(dir, perm)
}

// faultFile is a file of a faultFS.
type faultFile struct {
	vfs.File
	fs   *faultFS
	name string
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.spend(f.name)
	switch err := f.fs.fault(f.name); {
	case errors.Is(err, syscall.ENOSPC):
		n, werr := f.File.WriteAt(p[:len(p)/2], off)
		if werr != nil {
			return n, werr
		}
		return n, pathErr("write", f.name, err)
	case err != nil:
		return 0, pathErr("write", f.name, err)
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Write(p []byte) (int, error) {
	f.fs.spend(f.name)
	switch err := f.fs.fault(f.name); {
	case errors.Is(err, syscall.ENOSPC):
		n, werr := f.File.Write(p[:len(p)/2])
		if werr != nil {
			return n, werr
		}
		return n, pathErr("write", f.name, err)
	case err != nil:
		return 0, pathErr("write", f.name, err)
	}
	return f.File.Write(p)
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.fault(f.name); err != nil {
		st, serr := f.File.Stat()
		if errors.Is(err, syscall.EROFS) || serr != nil || size > st.Size() {
			return pathErr("truncate", f.name, err)
		}
	}
	return f.File.Truncate(size)
}

// logBuffer collects a server's log lines for a test to look through.
// It is safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the lines containing every one of words.
func (b *logBuffer) lines(words ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for line := range strings.SplitSeq(b.buf.String(), "\n") {
		ok := line != ""
		for _, w := range words {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// newLogBuffer returns a logger writing into a new logBuffer.
func newLogBuffer() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// apiCode is the JetStream error code carried by err, 0 if none.
func apiCode(err error) jetstream.ErrorCode {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode
	}
	return 0
}
