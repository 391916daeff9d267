package main

import (
	"io"
	"log/slog"

	"github.com/bus-dev/bus/conf"
)

// newLogger returns the process logger, writing to w in cfg's format at
// cfg's level. The server gets it through Options.Logger.
func newLogger(cfg conf.Config, w io.Writer) *slog.Logger {
	return newLoggerAt(cfg, w, cfg.LogLevel)
}

// newLoggerAt is newLogger at level, which a *slog.LevelVar lets a
// config reload change.
func newLoggerAt(cfg conf.Config, w io.Writer, level slog.Leveler) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == conf.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
