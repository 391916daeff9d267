//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// refuseLocked fails when a running bus holds the LOCK file at path. It
// opens the file read-only and never creates it, so a store without one
// is not changed.
func refuseLocked(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &exitError{exitFailure, err}
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return &exitError{exitFailure, fmt.Errorf("%s is held by a running bus: stop it first (a store is checked offline; a running one through $JS.API)", path)}
		}
		return &exitError{exitFailure, fmt.Errorf("lock %s: %w", path, err)}
	}
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}
