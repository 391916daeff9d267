package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

// newLogger returns a logger writing to w in cfg's format at cfg's level,
// with cfg's time stamps; the server gets it through Options.Logger.
func newLogger(cfg conf.Config, w io.Writer) *slog.Logger {
	return slog.New(newHandler(cfg, w, logLevel(cfg)))
}

// logLevel is the least severe level cfg logs: LevelTrace with the
// protocol trace on (nats-server's -V also logs debug lines), else
// log_level.
func logLevel(cfg conf.Config) slog.Level {
	if cfg.Trace || cfg.TraceVerbose {
		return server.LevelTrace
	}
	return cfg.LogLevel
}

// newHandler is a text or JSON handler on w at level, with cfg's time
// stamps (none, local or UTC) and the trace level named TRACE.
func newHandler(cfg conf.Config, w io.Writer, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 {
			return a
		}
		switch a.Key {
		case slog.TimeKey:
			if !cfg.LogTime {
				return slog.Attr{}
			}
			if cfg.LogTimeUTC {
				a.Value = slog.TimeValue(a.Value.Time().UTC())
			}
		case slog.LevelKey:
			if l, ok := a.Value.Any().(slog.Level); ok && l == server.LevelTrace {
				a.Value = slog.StringValue("TRACE")
			}
		}
		return a
	}}
	if cfg.LogFormat == conf.LogJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// logSink is where the process logs: a handler and what to close when a
// reload replaces it (nil for standard error).
type logSink struct {
	handler slog.Handler
	closer  io.Closer
}

// openLogSink opens the destination cfg names, at level: log_file (with
// rotation), else remote_syslog, else syslog, else stderr, as nats-server
// chooses. An error names the key.
func openLogSink(cfg conf.Config, stderr io.Writer, level slog.Leveler) (logSink, error) {
	switch {
	case cfg.LogFile != "":
		f, err := openLogFile(cfg.LogFile, cfg.LogSizeLimit, cfg.LogMaxFiles)
		if err != nil {
			return logSink{}, fmt.Errorf("log_file: %w", err)
		}
		return logSink{handler: newHandler(cfg, f, level), closer: f}, nil
	case cfg.RemoteSyslog != "" || cfg.Syslog:
		key := "syslog"
		if cfg.RemoteSyslog != "" {
			key = "remote_syslog"
		}
		h, c, err := newSyslogHandler(cfg, level)
		if err != nil {
			return logSink{}, fmt.Errorf("%s: %w", key, err)
		}
		return logSink{handler: h, closer: c}, nil
	}
	return logSink{handler: newHandler(cfg, stderr, level)}, nil
}

// logDestination is what a reload compares to decide whether to open a
// new sink: the keys that shape the handler, not the level.
type logDestination struct {
	format, file, remote string
	sizeLimit            int64
	maxFiles             int
	syslog, time, utc    bool
}

func destinationOf(cfg conf.Config) logDestination {
	return logDestination{format: cfg.LogFormat, file: cfg.LogFile, remote: cfg.RemoteSyslog, sizeLimit: cfg.LogSizeLimit,
		maxFiles: cfg.LogMaxFiles, syslog: cfg.Syslog, time: cfg.LogTime, utc: cfg.LogTimeUTC}
}
