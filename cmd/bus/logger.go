package main

import (
	"io"
	"log/slog"

	"github.com/bus-dev/bus/conf"
)

// newLogger returns the process logger, writing to w in cfg's format at
// cfg's level. The server gets it through Options.Logger.
func newLogger(cfg conf.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == conf.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
