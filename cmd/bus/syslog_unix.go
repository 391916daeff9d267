//go:build !windows && !plan9 && !js && !wasip1

package main

import (
	"context"
	"io"
	"log/slog"
	"log/syslog"

	"github.com/bus-dev/bus/conf"
)

// newSyslogHandler logs to the local syslog (syslog) or a remote one
// (remote_syslog), tagged "bus", each record at the syslog priority of
// its level: trace and debug as debug, info, warn as warning, error as
// err. Lines carry no time of their own: syslog stamps them.
func newSyslogHandler(cfg conf.Config, level slog.Leveler) (slog.Handler, io.Closer, error) {
	var w *syslog.Writer
	var err error
	if cfg.RemoteSyslog != "" {
		network, addr, perr := conf.SyslogAddr(cfg.RemoteSyslog)
		if perr != nil {
			return nil, nil, perr
		}
		w, err = syslog.Dial(network, addr, syslog.LOG_INFO|syslog.LOG_DAEMON, "bus")
	} else {
		w, err = syslog.New(syslog.LOG_INFO|syslog.LOG_DAEMON, "bus")
	}
	if err != nil {
		return nil, nil, err
	}
	cfg.LogTime = false
	h := &syslogHandler{}
	for i, write := range []func(string) error{w.Debug, w.Info, w.Warning, w.Err} {
		h.byLevel[i] = newHandler(cfg, priorityWriter(write), level)
	}
	return h, w, nil
}

// priorityWriter writes each record (one Write per record) at one
// syslog priority.
type priorityWriter func(string) error

func (p priorityWriter) Write(b []byte) (int, error) {
	if err := p(string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// syslogHandler sends a record to the handler of its priority.
type syslogHandler struct {
	byLevel [4]slog.Handler // debug, info, warning, err
}

func (h *syslogHandler) pick(l slog.Level) slog.Handler {
	switch {
	case l < slog.LevelInfo:
		return h.byLevel[0]
	case l < slog.LevelWarn:
		return h.byLevel[1]
	case l < slog.LevelError:
		return h.byLevel[2]
	}
	return h.byLevel[3]
}

func (h *syslogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.pick(l).Enabled(ctx, l)
}

func (h *syslogHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.pick(r.Level).Handle(ctx, r)
}

func (h *syslogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := &syslogHandler{}
	for i, b := range h.byLevel {
		out.byLevel[i] = b.WithAttrs(as)
	}
	return out
}

func (h *syslogHandler) WithGroup(name string) slog.Handler {
	out := &syslogHandler{}
	for i, b := range h.byLevel {
		out.byLevel[i] = b.WithGroup(name)
	}
	return out
}
