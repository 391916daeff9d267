// Command bus runs the bus message server.
//
//	bus serve [--config bus.yaml] [flags]   run until SIGINT or SIGTERM
//	bus -c nats.conf [nats-server flags]     the same, as nats-server is run
//	bus version                              bus's version and commit, and the nats-server version it speaks
//	bus dlq ls|redrive STREAM                dead letters, over the nats CLI's connection flags and contexts
//	bus backup STREAM DIR [--incremental P]  a full or incremental backup over the client port
//	bus restore DIR [INCREMENT_DIR ...]      a full backup and its increments, checked, then restored
//	bus store verify|info DIR                a stopped store checked or listed, without changing it
//	bus store verify -s URL STREAM           one stream of a running bus checked ($BUS.API.STORE.VERIFY)
//
// Configuration comes from package conf: defaults, then the --config file
// (nats-server's .conf, YAML, TOML or JSON), then BUS_* environment
// variables, then flags, each overriding the one before. natsargs.go
// rewrites nats-server's command line (-js, -sd, --http_port, ...) into
// bus's before cobra parses it, refusing the flags bus cannot honour by
// name. conf/bus.example.yaml documents every key.
// options.go is the only code that knows both conf.Config and
// server.Options.
//
// Logs are written with log/slog, as text or JSON (log_format) at
// log_level (LevelTrace with trace), to standard error, log_file
// (logfile.go rotates it), syslog or remote_syslog (syslog_unix.go), with
// or without times (logtime, logtime_utc): logger.go builds the handler.
// The same logger is handed to the server; its root is a swapHandler
// (loghandler.go) that a reload points at a new handler, which every
// logger derived from it follows (processlog.go).
// Once listening, bus logs "serving" with the client and monitoring
// addresses actually bound (monitoring, and monitoring_https when HTTPS
// is on), which matter when a port is 0.
//
// storedir.go checks store_dir before anything listens (unusable: exit 2
// naming the key) and names another bus holding its lock. natsconn.go is
// how the client commands connect: the nats CLI's flags, NATS_*
// variables and context files (~/.config/nats/context/<name>.json).
//
// backup.go, restore.go and backupdir.go (the directory, its manifest and
// the checks of a chain) drive STREAM.SNAPSHOT and STREAM.RESTORE and read
// the format through package snapshot (docs/backup.md). store.go opens
// each stream with jetlog's own recovery on storeoverlay.go's read-only
// view, whose writes stay in memory; storelock_unix.go refuses a store a
// running bus holds.
//
// The first SIGINT or SIGTERM starts a graceful shutdown bounded by 10s; a
// second signal during it exits at once.
//
// Exit codes: 0 after a clean shutdown; 1 when the server fails to start or
// to stop in time, or a second signal cuts shutdown short; 2 for bad flags,
// arguments or configuration, with every problem printed on its own line;
// 3 for a damaged, incomplete or out-of-order backup or a damaged store,
// 4 for a restore onto an existing stream (exit.go).
package main
