package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
	"github.com/spf13/cobra"
)

// shutdownTimeout bounds the graceful shutdown after the first signal.
const shutdownTimeout = 10 * time.Second

// payloadWarnSize is where nats-server starts warning about max_payload:
// every client must be ready to buffer a message that large.
const payloadWarnSize = 8 << 20

func newServeCmd(stderr io.Writer) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server until SIGINT or SIGTERM",
		Long: `Run the server until SIGINT or SIGTERM.

Settings come from, lowest precedence first: defaults, the --config file,
BUS_* environment variables (BUS_MAX_PAYLOAD for max_payload), and the flags
below. See conf/bus.example.yaml for every key.

The first signal shuts down gracefully, within 10s; a second one exits at
once with code 1. SIGHUP reloads the TLS certificate files for new
connections.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := conf.Load(configPath, cmd.Flags())
			if err != nil {
				return &exitError{exitUsage, err}
			}
			log := newLogger(cfg, stderr)
			for _, name := range conf.IgnoredEnv() {
				log.Warn("ignoring a Kubernetes service-link variable; it is not a bus setting", "variable", name)
			}
			if cfg.MaxPayload > payloadWarnSize {
				log.Warn("max_payload is over 8MB; consider chunking large messages", "max_payload", cfg.MaxPayload)
			}
			opts := options(cfg, log)
			if plainSecrets(opts.Authorization) || plainSystemSecrets(opts.SystemAccount) {
				// As nats-server warns: a leaked config file leaks these.
				log.Warn("plaintext passwords or tokens in the authorization block; use bcrypt hashes (bus passwd) or nkeys")
			}
			srv, err := server.New(opts)
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("configure server: %w", err)}
			}
			// Listen for signals before starting, so that one arriving
			// during Start shuts down rather than killing the process.
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer signal.Stop(sigs)
			return serve(srv, log, sigs)
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "", "config `file` (.yaml, .yml, .toml or .json)")
	conf.AddFlags(cmd.Flags())
	return cmd
}

// runner is what serve needs of a *server.Server; tests pass a fake to
// drive the shutdown paths deterministically.
type runner interface {
	Start() error
	Addr() net.Addr
	HTTPAddr() net.Addr
	Shutdown(ctx context.Context) error
	ReloadTLS() error
}

// serve starts srv and blocks until a signal arrives on sigs, then shuts
// srv down within shutdownTimeout. The error carries the exit code: none
// after a clean shutdown, exitFailure if srv fails to start or to stop, or
// if a second signal arrives during shutdown.
func serve(srv runner, log *slog.Logger, sigs <-chan os.Signal) error {
	if err := srv.Start(); err != nil {
		return &exitError{exitFailure, fmt.Errorf("start: %w", err)}
	}
	monitoring := "disabled"
	if addr := srv.HTTPAddr(); addr != nil {
		monitoring = addr.String()
	}
	// With port 0 the configured port says nothing; log what we got.
	log.Info("serving", "client", srv.Addr().String(), "monitoring", monitoring)

	sig := <-sigs
	for sig == syscall.SIGHUP {
		if err := srv.ReloadTLS(); err != nil {
			log.Error("tls reload failed; the previous certificates stay in use", "err", err)
		} else {
			log.Info("tls reloaded", "signal", sig.String())
		}
		sig = <-sigs
	}
	log.Info("shutting down", "signal", sig.String(), "timeout", shutdownTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	for {
		select {
		case err := <-done:
			if err != nil {
				return &exitError{exitFailure, fmt.Errorf("shutdown: %w", err)}
			}
			log.Info("stopped")
			return nil
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				continue // a reload; it does not cut the shutdown short
			}
			// The operator wants out now: the process exits with
			// Shutdown still running, which is the one goroutine nobody
			// waits for.
			return &exitError{exitFailure, fmt.Errorf("%s during shutdown: exiting without waiting", sig)}
		}
	}
}
