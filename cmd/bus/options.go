package main

import (
	"log/slog"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

// options maps a validated configuration to server.Options. It is the only
// code that knows both, so a new key ends up here.
func options(cfg conf.Config, log *slog.Logger) server.Options {
	port := cfg.Port
	if port == -1 {
		port = 0 // nats-server's "random port"; server.Options spells it 0
	}
	return server.Options{
		Host:             cfg.Host,
		Port:             port,
		HTTPPort:         cfg.HTTPPort, // both use 0 for disabled, -1 for a free port
		ServerName:       cfg.ServerName,
		StoreDir:         cfg.StoreDir,
		JetStream:        cfg.JetStream,
		MaxPayload:       int(cfg.MaxPayload), // at most 64MB, checked by conf
		MaxControlLine:   int(cfg.MaxControlLine),
		MaxConnections:   cfg.MaxConnections,
		MaxSubscriptions: cfg.MaxSubscriptions,
		MaxPending:       cfg.MaxPending,
		PingInterval:     cfg.PingInterval,
		MaxPingsOut:      cfg.MaxPingsOut,
		WriteDeadline:    cfg.WriteDeadline,
		Logger:           log,
	}
}
