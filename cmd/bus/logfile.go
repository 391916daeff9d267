package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// logFile is log_file: lines are appended to it, and past sizeLimit
// bytes (0: never) it is renamed <name>.YYYY.MM.DD.hh.mm.ss.nnnnnnnnn, a
// new one is started, and the oldest of those backups are removed so
// that maxFiles files remain, the current one included (0: all), as
// nats-server rotates. Safe for concurrent use: every handler writes a
// record in one Write.
type logFile struct {
	name      string
	sizeLimit int64
	maxFiles  int

	mu   sync.Mutex // guards the fields below
	f    *os.File
	size int64 // bytes in f
}

// logFileMode is nats-server's: the owner writes, the group reads.
const logFileMode = 0o640

func openLogFile(name string, sizeLimit int64, maxFiles int) (*logFile, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, logFileMode)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &logFile{name: name, sizeLimit: sizeLimit, maxFiles: maxFiles, f: f, size: st.Size()}, nil
}

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	if err == nil && l.sizeLimit > 0 && l.size > l.sizeLimit {
		err = l.rotate()
	}
	return n, err
}

// rotate renames the full file, starts a new one and purges old backups.
// Called with mu held.
func (l *logFile) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("log_file: close for rotation: %w", err)
	}
	now := time.Now()
	backup := fmt.Sprintf("%s.%04d.%02d.%02d.%02d.%02d.%02d.%09d", l.name,
		now.Year(), now.Month(), now.Day(), now.Hour(), now.Minute(), now.Second(), now.Nanosecond())
	renameErr := os.Rename(l.name, backup)
	f, err := os.OpenFile(l.name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, logFileMode)
	if err != nil {
		l.f = nil
		return fmt.Errorf("log_file: reopen after rotation: %w", err)
	}
	l.f, l.size = f, 0
	if renameErr != nil {
		return fmt.Errorf("log_file: rotate: %w", renameErr)
	}
	if l.maxFiles > 0 {
		return l.purge()
	}
	return nil
}

// purge removes the oldest backups beyond maxFiles-1. Called with mu held.
func (l *logFile) purge() error {
	dir, base := filepath.Dir(l.name), filepath.Base(l.name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("log_file: purge: %w", err)
	}
	var backups []string
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || e.IsDir() {
			continue
		}
		if _, err := time.Parse("2006.01.02.15.04.05.000000000", stamp); err == nil {
			backups = append(backups, e.Name())
		}
	}
	slices.Sort(backups) // the stamp sorts oldest first
	for len(backups) > l.maxFiles-1 {
		if err := os.Remove(filepath.Join(dir, backups[0])); err != nil {
			return fmt.Errorf("log_file: purge: %w", err)
		}
		backups = backups[1:]
	}
	return nil
}

// Close closes the file; later writes fail with os.ErrClosed.
func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
