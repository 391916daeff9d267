package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/bus-dev/bus/server"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of bus and of the Go toolchain that built it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := fmt.Fprintln(cmd.OutOrStdout(), versionString()); err != nil {
				return &exitError{exitFailure, fmt.Errorf("print version: %w", err)}
			}
			return nil
		},
	}
}

// versionString is the protocol version clients see in INFO, then the build:
// "bus 2.11.0 (go1.26.8 linux/amd64, commit 0123456789ab)".
func versionString() string {
	s := fmt.Sprintf("bus %s (%s %s/%s", server.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if rev := revision(); rev != "" {
		s += ", commit " + rev
	}
	return s + ")"
}

// revision is the VCS commit stamped by go build, shortened, with "+dirty"
// for uncommitted changes; "" when the build has none (go run, go test).
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
