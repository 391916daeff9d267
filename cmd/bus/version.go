package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/bus-dev/bus/server"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bus's version and commit, and the nats-server protocol version it speaks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := fmt.Fprintln(cmd.OutOrStdout(), versionString()); err != nil {
				return &exitError{exitFailure, fmt.Errorf("print version: %w", err)}
			}
			return nil
		},
	}
}

// versionString is what bus itself is, then what it speaks:
//
//	bus v1.4.0 (commit 0123456789ab, modified)
//	speaks nats-server 2.11.0 (the version clients see in INFO)
//	built with go1.26.8 linux/amd64
//
// The first line is bus's own release, which is not the protocol version:
// a nats CLI or client compares INFO's version with nats-server's, so that
// one stays the server version bus is compatible with.
func versionString() string {
	var b strings.Builder
	b.WriteString("bus " + buildVersion(debug.ReadBuildInfo()))
	b.WriteString("\nspeaks nats-server " + server.Version + " (the version clients see in INFO)")
	fmt.Fprintf(&b, "\nbuilt with %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// buildVersion is the module version and VCS commit stamped by the go
// command: "v1.4.0" from go install …@v1.4.0, a pseudo-version or
// "(devel)" from a checkout, then "(commit 0123456789ab, modified)" when
// the build saw a repository. "unknown" when the binary carries no build
// information at all.
func buildVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev == "" {
		return v
	}
	return v + " (commit " + rev + modified + ")"
}
