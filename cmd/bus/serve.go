package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

Settings come from, lowest precedence first: defaults, the --config file
(.conf in nats-server's syntax, .yaml, .toml, .json), BUS_* environment
variables (BUS_MAX_PAYLOAD for max_payload), and the flags below.
nats-server's flags work too (-p, -m, -js, -sd, -D, ...; "bus -c nats.conf"
runs serve). See conf/bus.example.yaml for every key and docs/config.md for
nats-server's keys and flags.

The first signal shuts down gracefully, within 10s; a second one exits at
once with code 1. SIGHUP reloads the configuration file (what can change
live: users, permissions, limits, logging, TLS certificates; see
docs/operations.md). SIGUSR2 (or 'bus ldm') enters lame-duck mode: no new
clients, connected ones told to reconnect elsewhere and closed over
lame_duck_duration, then the server stops.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := conf.Load(configPath, cmd.Flags())
			if err != nil {
				return &exitError{exitUsage, err}
			}
			logs, err := openProcessLog(cfg, stderr)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer logs.close()
			log := logs.logger
			log.Debug("configuration loaded", "file", configPath, "log_level", cfg.LogLevel.String())
			// Kubernetes sets these in every pod of a namespace with a
			// Service named bus: they are expected, so not worth a warning.
			if names := conf.IgnoredEnv(); len(names) > 0 {
				log.Debug("ignoring Kubernetes service-link variables; they are not bus settings", "variables", strings.Join(names, ","))
			}
			if keys := conf.IgnoredKeys(configPath); len(keys) > 0 {
				log.Warn("ignoring nats-server tuning keys that change nothing in bus", "keys", strings.Join(keys, ","))
			}
			if cfg.MaxPayload > payloadWarnSize {
				log.Warn("max_payload is over 8MB; consider chunking large messages", "max_payload", cfg.MaxPayload)
			}
			if err := checkStoreDir(cfg); err != nil {
				return err
			}
			opts := options(cfg, log)
			if plainSecrets(opts.Authorization) || plainSystemSecrets(opts.SystemAccount, opts.Accounts) {
				// As nats-server warns: a leaked config file leaks these.
				log.Warn("plaintext passwords or tokens in the authorization block; use bcrypt hashes (bus passwd) or nkeys")
			}
			srv, err := server.New(opts)
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("configure server: %w", err)}
			}
			if cfg.PidFile != "" {
				if err := os.WriteFile(cfg.PidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
					return &exitError{exitFailure, fmt.Errorf("pid_file: %w", err)}
				}
				defer os.Remove(cfg.PidFile) //nolint:errcheck // best effort: the process is ending
			}
			// Listen for signals before starting, so that one arriving
			// during Start shuts down rather than killing the process.
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, append([]os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}, lameDuckSignals()...)...)
			defer signal.Stop(sigs)
			return serveWith(srv, log, sigs, configReloader(srv, configPath, cmd.Flags(), logs))
		},
	}
	cmd.Flags().StringVarP(&configPath, "config", "c", "", "config `file` (.conf in nats-server's syntax, .yaml, .yml, .toml or .json)")
	conf.AddFlags(cmd.Flags())
	conf.AddNATSFlags(cmd.Flags())
	return cmd
}

// runner is what serve needs of a *server.Server; tests pass a fake to
// drive the shutdown paths deterministically.
type runner interface {
	Start() error
	Addr() net.Addr
	HTTPAddr() net.Addr
	HTTPSAddr() net.Addr
	Shutdown(ctx context.Context) error
	ReloadTLS() error
}

// configReloader is what SIGHUP does: read the configuration again (the
// file, the environment and the flags, as at start) and apply it to srv
// with Reload, which logs what changed and refuses what needs a restart.
// The logging keys change here (processlog.go): a new destination is
// opened before the server's settings are applied, so that a log_file
// that cannot be opened refuses the whole reload.
func configReloader(srv *server.Server, path string, flags *pflag.FlagSet, logs *processLog) func() error {
	return func() error {
		log := logs.logger
		log.Info("reloading the configuration", "file", path)
		cfg, err := conf.Load(path, flags)
		var next *logSink
		if err == nil {
			next, err = logs.prepare(cfg)
		}
		if err == nil {
			err = srv.Reload(options(cfg, log))
			if err != nil {
				next.discard()
			}
		}
		if err != nil {
			log.Error("config reload failed; the running configuration stays", "err", err)
			return err
		}
		logs.apply(cfg, next)
		return nil
	}
}

// lameDucker is the part of *server.Server that lame-duck mode needs;
// serve uses it when srv has it (tests' fakes need not).
type lameDucker interface {
	LameDuck(ctx context.Context) error
}

// monitoringAttrs say where monitoring listens: monitoring is the HTTP
// address ("https-only" when only HTTPS is on, "disabled" when neither
// is), and monitoring_https the HTTPS one when it is on.
func monitoringAttrs(srv runner) []any {
	httpAddr, httpsAddr := srv.HTTPAddr(), srv.HTTPSAddr()
	switch {
	case httpAddr != nil && httpsAddr != nil:
		return []any{"monitoring", httpAddr.String(), "monitoring_https", httpsAddr.String()}
	case httpAddr != nil:
		return []any{"monitoring", httpAddr.String()}
	case httpsAddr != nil:
		return []any{"monitoring", "https-only", "monitoring_https", httpsAddr.String()}
	}
	return []any{"monitoring", "disabled"}
}

// serve starts srv and blocks until a signal arrives on sigs, then shuts
// srv down within shutdownTimeout. The error carries the exit code: none
// after a clean shutdown, exitFailure if srv fails to start or to stop, or
// if a second signal arrives during shutdown. SIGHUP reloads the TLS
// certificates.
func serve(srv runner, log *slog.Logger, sigs <-chan os.Signal) error {
	return serveWith(srv, log, sigs, func() error {
		if err := srv.ReloadTLS(); err != nil {
			log.Error("tls reload failed; the previous certificates stay in use", "err", err)
			return err
		}
		log.Info("tls reloaded", "signal", syscall.SIGHUP.String())
		return nil
	})
}

// serveWith is serve with SIGHUP calling reload (which logs what it did).
// The lame-duck signal (SIGUSR2) drains srv with LameDuck, after which
// serve returns as after a shutdown.
func serveWith(srv runner, log *slog.Logger, sigs <-chan os.Signal, reload func() error) error {
	if err := srv.Start(); err != nil {
		return startError(err)
	}
	// With port 0 the configured port says nothing; log what we got.
	log.Info("serving", append([]any{"client", srv.Addr().String()}, monitoringAttrs(srv)...)...)

	var lameDuck chan error // set once lame-duck mode runs
	var sig os.Signal
wait:
	for {
		select {
		case sig = <-sigs:
			switch {
			case sig == syscall.SIGHUP:
				_ = reload() // logged by reload; the server runs on
			case isLameDuckSignal(sig):
				ld, ok := srv.(lameDucker)
				if !ok || lameDuck != nil {
					continue
				}
				log.Info("entering lame duck mode", "signal", sig.String())
				lameDuck = make(chan error, 1)
				go func() { lameDuck <- ld.LameDuck(context.Background()) }()
			default:
				break wait
			}
		case err := <-lameDuck:
			if err != nil {
				return &exitError{exitFailure, fmt.Errorf("lame duck: %w", err)}
			}
			log.Info("stopped after lame duck mode")
			return nil
		}
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
			if sig == syscall.SIGHUP || isLameDuckSignal(sig) {
				continue // it does not cut the shutdown short
			}
			// The operator wants out now: the process exits with
			// Shutdown still running, which is the one goroutine nobody
			// waits for.
			return &exitError{exitFailure, fmt.Errorf("%s during shutdown: exiting without waiting", sig)}
		}
	}
}
