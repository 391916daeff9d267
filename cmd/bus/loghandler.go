package main

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// swapHandler forwards every record to the handler in force, which a
// config reload replaces (log_file, syslog, logtime …): the loggers the
// server derived with With (one per connection) follow it, since each
// replays its own attributes and groups on the new handler, once.
type swapHandler struct {
	root   *atomic.Pointer[handlerBox]
	derive []func(slog.Handler) slog.Handler // With and WithGroup, in order
	cache  atomic.Pointer[derivedHandler]
}

// handlerBox holds a root handler; its address tells roots apart.
type handlerBox struct{ h slog.Handler }

// derivedHandler is derive applied to one root.
type derivedHandler struct {
	from *handlerBox
	h    slog.Handler
}

func newSwapHandler(h slog.Handler) *swapHandler {
	s := &swapHandler{root: new(atomic.Pointer[handlerBox])}
	s.root.Store(&handlerBox{h})
	return s
}

// swap makes h the handler of s and of every handler derived from it.
func (s *swapHandler) swap(h slog.Handler) { s.root.Store(&handlerBox{h}) }

func (s *swapHandler) current() slog.Handler {
	root := s.root.Load()
	if d := s.cache.Load(); d != nil && d.from == root {
		return d.h
	}
	h := root.h
	for _, f := range s.derive {
		h = f(h)
	}
	s.cache.Store(&derivedHandler{from: root, h: h})
	return h
}

func (s *swapHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.current().Enabled(ctx, l)
}

func (s *swapHandler) Handle(ctx context.Context, r slog.Record) error {
	return s.current().Handle(ctx, r)
}

func (s *swapHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithAttrs(as) })
}

func (s *swapHandler) WithGroup(name string) slog.Handler {
	return s.with(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (s *swapHandler) with(f func(slog.Handler) slog.Handler) *swapHandler {
	d := make([]func(slog.Handler) slog.Handler, len(s.derive), len(s.derive)+1)
	copy(d, s.derive)
	return &swapHandler{root: s.root, derive: append(d, f)}
}
