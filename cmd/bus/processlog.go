package main

import (
	"io"
	"log/slog"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

// processLog is the process's logger and what a reload may change of
// it: the level (log_level, trace, debug) through a LevelVar, and the
// destination and line shape (log_file, syslog, remote_syslog,
// log_format, logtime, logtime_utc) by swapping the handler, as
// nats-server reloads its logging keys. Used by the serve goroutine
// only.
type processLog struct {
	logger *slog.Logger
	root   *swapHandler
	level  *slog.LevelVar
	stderr io.Writer
	sink   logSink
	dest   logDestination
}

func openProcessLog(cfg conf.Config, stderr io.Writer) (*processLog, error) {
	level := new(slog.LevelVar)
	level.Set(logLevel(cfg))
	sink, err := openLogSink(cfg, stderr, level)
	if err != nil {
		return nil, err
	}
	root := newSwapHandler(sink.handler)
	return &processLog{logger: slog.New(root), root: root, level: level, stderr: stderr, sink: sink, dest: destinationOf(cfg)}, nil
}

// prepare opens the sink cfg needs when its destination differs from
// the one in use; nil when it does not.
func (p *processLog) prepare(cfg conf.Config) (*logSink, error) {
	if destinationOf(cfg) == p.dest {
		return nil, nil
	}
	sink, err := openLogSink(cfg, p.stderr, p.level)
	if err != nil {
		return nil, err
	}
	return &sink, nil
}

// apply switches to next (when not nil) and to cfg's level, logging
// what changed.
func (p *processLog) apply(cfg conf.Config, next *logSink) {
	if next != nil {
		old := p.sink
		p.root.swap(next.handler)
		p.sink, p.dest = *next, destinationOf(cfg)
		if old.closer != nil {
			_ = old.closer.Close() // records in flight on it are lost; the new sink has the rest
		}
		p.logger.Info("log destination changed", "log_file", cfg.LogFile, "syslog", cfg.Syslog, "remote_syslog", cfg.RemoteSyslog)
	}
	if old, level := p.level.Level(), logLevel(cfg); old != level {
		p.level.Set(level)
		p.logger.Info("log level changed", "from", levelName(old), "to", levelName(level))
	}
}

// discard closes a sink prepare opened that a refused reload does not
// use; nil is fine.
func (s *logSink) discard() {
	if s != nil && s.closer != nil {
		_ = s.closer.Close()
	}
}

// close closes the sink in use, at exit.
func (p *processLog) close() {
	p.sink.discard()
}

// levelName is a level as the log shows it ("TRACE" for the protocol
// trace's).
func levelName(l slog.Level) string {
	if l == server.LevelTrace {
		return "TRACE"
	}
	return l.String()
}
