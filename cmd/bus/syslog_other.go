//go:build windows || plan9 || js || wasip1

package main

import (
	"errors"
	"io"
	"log/slog"

	"github.com/bus-dev/bus/conf"
)

// newSyslogHandler refuses: log/syslog does not exist on this platform.
func newSyslogHandler(conf.Config, slog.Leveler) (slog.Handler, io.Closer, error) {
	return nil, nil, errNoSyslog
}

// errNoSyslog is returned where the platform has no syslog.
var errNoSyslog = errors.New("this platform has no syslog; log to standard error or log_file instead")
