package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

// checkStoreDir makes sure store_dir can hold streams before anything
// listens: a directory bus can create (or finds) and write in. A path it
// cannot use is a configuration mistake (exit 2, naming the key) rather
// than a failure of the server.
func checkStoreDir(cfg conf.Config) error {
	if !cfg.JetStream.Enabled {
		return nil
	}
	dir := cfg.StoreDir
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return &exitError{exitUsage, fmt.Errorf("conf: store_dir: %q cannot be used: %w", dir, err)}
	}
	probe, err := os.CreateTemp(dir, ".bus-write-check-*")
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("conf: store_dir: %q is not writable: %w", dir, err)}
	}
	_ = probe.Close()
	_ = os.Remove(probe.Name())
	return nil
}

// startError is the exit for a server that did not start. The store's
// lock held means another bus has the directory open: two servers must
// never share one, so say so and what to do (the error names the LOCK
// file's path).
func startError(err error) error {
	if errors.Is(err, server.ErrStoreLocked) {
		return &exitError{exitFailure, fmt.Errorf("start: another bus process holds the store directory (store_dir); stop it, or give this one its own store_dir: %w", err)}
	}
	return &exitError{exitFailure, fmt.Errorf("start: %w", err)}
}
