// Package conf turns a config file, BUS_* environment variables and
// command-line flags into a validated Config.
//
// Precedence, lowest first: the defaults (Default), the file, the
// environment, the flags. Each key has one name, and the other sources derive
// theirs from it:
//
//	file key      max_payload         (.conf, YAML, TOML or JSON, chosen by extension)
//	environment   BUS_MAX_PAYLOAD
//	flag          --max-payload
//
// Key names and meanings follow nats-server wherever it has the setting, so
// operators can carry their settings over; a few nats-server spellings
// (ping_max, max_conn, max_subs, monitor_port, net, storedir) are accepted in
// files as aliases. Sizes take nats-server's units: k, m, g are powers of
// 1000 and kb, mb, gb (or ki, mi, gi, kib, …) powers of 1024, in any case, so
// "1MB" is 1048576 bytes. Durations are Go duration strings ("2m", "500ms");
// a plain number is a count of seconds, as nats-server accepts.
//
// Every problem is reported, not just the first: Load returns the errors
// joined, each a *KeyError naming the key, what is wrong with it and where the
// value came from. Unknown keys in the file and unknown BUS_* variables are
// errors too, since a typo would otherwise silently leave a default in place.
// The exception is the link variables Kubernetes sets for a Service named
// "bus" or "bus-<name>" (BUS_SERVICE_HOST, BUS_PORT=tcp://…,
// BUS_HTTP_PORT=tcp://…, …): they are neither read nor refused, the flags
// of the keys they shadow still apply, and IgnoredEnv lists them for a
// debug line.
//
// A .conf file is nats-server's own syntax, read with nats-server's
// parser (natsconf.go), without JetStream or monitoring unless it asks,
// as there. In every format nats-server's keys that bus spells otherwise
// (listen, http, debug) are mapped, those bus does not implement are
// refused with ErrUnsupportedKey saying what to do, and pure tuning keys
// are dropped for IgnoredKeys to list (natskeys.go, docs/config.md).
// AddNATSFlags adds nats-server's --user/--pass/--auth and --tls* flags,
// which set parts of the file-only blocks.
//
// bus.example.yaml documents every key with its default; a test keeps it
// complete and its values equal to Default.
//
// This package imports nothing of ours. cmd/bus maps Config to
// server.Options, so adding a key means: a field in Config, an entry in
// keys, a check in validate.go if it has a range, a paragraph in
// bus.example.yaml, and a line in cmd/bus's mapping.
package conf
