package main

import (
	"fmt"
	"slices"
	"strings"
)

// nats-server's command line is Go's flag package: one dash or two for
// any flag, multi-letter short names (-js, -sd, -DV) and underscores
// (--http_port). pflag has none of that by design (POSIX flags; see
// spf13/cobra#740), so, as other programs moving a flag-package command
// line to cobra do (PlakarKorp/plakar#2306 rewrites its single-dash
// options before cobra parses), natsArgs rewrites the arguments first: nats-server's spellings become
// bus's long flags, flags bus cannot honour are refused by name, and a
// command line that starts with a flag runs serve, as nats-server has no
// subcommands. Everything after "--", and every flag's value, is left
// alone.

// natsFlagNames maps nats-server's spellings (without dashes) to bus's
// flags (with them).
var natsFlagNames = map[string]string{
	"c": "--config", "config": "--config",
	"a": "--host", "addr": "--host", "net": "--host",
	"p": "--port", "port": "--port",
	"m": "--http-port", "http_port": "--http-port",
	"ms": "--https-port", "https_port": "--https-port",
	"js": "--jetstream", "jetstream": "--jetstream",
	"sd": "--store-dir", "store_dir": "--store-dir",
	"n": "--server-name", "name": "--server-name", "server_name": "--server-name",
	"P": "--pid-file", "pid": "--pid-file",
	"D": "--log-level=debug", "debug": "--log-level=debug",
}

// natsBoolFlags take no value in nats-server.
var natsBoolFlags = []string{"js", "jetstream", "D", "debug", "V", "trace", "DV", "VV", "DVV", "T", "logtime", "tls", "tlsverify"}

// natsRefused are nats-server flags bus has nothing for, with what to do.
var natsRefused = map[string]string{
	"V":                  "protocol tracing is not in bus yet; use -D (--log-level debug) for connection logs",
	"trace":              "protocol tracing is not in bus yet; use -D (--log-level debug) for connection logs",
	"VV":                 "protocol tracing is not in bus yet; use -D (--log-level debug) for connection logs",
	"DV":                 "protocol tracing is not in bus yet; use -D (--log-level debug) for connection logs",
	"DVV":                "protocol tracing is not in bus yet; use -D (--log-level debug) for connection logs",
	"l":                  "bus logs to stderr; redirect it, or let the init system keep the log",
	"log":                "bus logs to stderr; redirect it, or let the init system keep the log",
	"s":                  "bus logs to stderr; let the init system send it to syslog",
	"syslog":             "bus logs to stderr; let the init system send it to syslog",
	"r":                  "bus logs to stderr; let the init system send it to syslog",
	"remote_syslog":      "bus logs to stderr; let the init system send it to syslog",
	"sl":                 "use kill (SIGTERM stops, SIGHUP reloads) or bus ldm for lame-duck mode",
	"signal":             "use kill (SIGTERM stops, SIGHUP reloads) or bus ldm for lame-duck mode",
	"cluster":            "bus runs as a single server and has no cluster; link servers with leafnodes.remotes in the config file",
	"cluster_name":       "bus runs as a single server and has no cluster",
	"cluster_advertise":  "bus runs as a single server and has no cluster",
	"routes":             "bus runs as a single server and has no cluster",
	"no_advertise":       "bus runs as a single server and has no cluster",
	"connect_retries":    "bus runs as a single server and has no cluster",
	"ports_file_dir":     "bus writes no ports file; the \"serving\" log line has the bound addresses",
	"profile":            "bus has no profiling port",
	"log_size_limit":     "bus logs to stderr and rotates nothing",
	"log_max_num":        "bus logs to stderr and rotates nothing",
	"max_traced_msg_len": "protocol tracing is not in bus yet",
}

// subcommands are the first arguments that name a command of bus's own.
var subcommands = []string{"serve", "version", "passwd", "dlq", "ldm", "help", "completion"}

// natsArgs rewrites a command line given as to nats-server into bus's.
func natsArgs(args []string) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	serve := args[0] == "serve"
	if !serve && !slices.Contains(subcommands, args[0]) && strings.HasPrefix(args[0], "-") {
		if slices.ContainsFunc(args, func(a string) bool { return a == "-v" || a == "--version" }) {
			return []string{"--version"}, nil
		}
		if !slices.Contains([]string{"-h", "--help", "-help"}, args[0]) {
			args, serve = append([]string{"serve"}, args...), true
		}
	}
	if !serve {
		return args, nil
	}
	out := []string{"serve"}
	var refused []string
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			out = append(out, rest[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case name == "v" || name == "version":
			return []string{"--version"}, nil
		case name == "h" || name == "help":
			out = append(out, "--help")
			continue
		case name == "T" || name == "logtime":
			// bus's lines always carry a time: -T and -T=true ask for
			// what it does; -T=false is refused.
			if hasVal && val != "true" {
				refused = append(refused, a+": bus's log lines always carry a time")
			}
			continue
		}
		if reason, ok := natsRefused[name]; ok {
			refused = append(refused, strings.SplitN(a, "=", 2)[0]+": "+reason)
			if !hasVal && !slices.Contains(natsBoolFlags, name) && i+1 < len(rest) {
				i++ // its value goes with it
			}
			continue
		}
		flag, known := natsFlagNames[name]
		if !known && len(name) > 1 {
			flag = "--" + strings.ReplaceAll(name, "_", "-") // bus's own long flags, with nats-server's underscores
		}
		if !known && len(name) <= 1 {
			out = append(out, a) // a short flag of bus's own (-c), or cobra's error
			continue
		}
		if hasVal {
			flag += "=" + val
		}
		isBool := slices.Contains(natsBoolFlags, name) || isBusBoolFlag(flag)
		switch {
		case hasVal || strings.Contains(flag, "=") || i+1 >= len(rest):
			out = append(out, flag)
		case isBool && (rest[i+1] == "true" || rest[i+1] == "false"):
			// "--jetstream false" as bus took it before the flag could
			// stand alone.
			i++
			out = append(out, flag+"="+rest[i])
		case isBool:
			out = append(out, flag)
		default:
			i++
			out = append(out, flag, rest[i]) // the value, untouched
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("nats-server flags bus does not implement:\n  %s", strings.Join(refused, "\n  "))
	}
	return out, nil
}

// isBusBoolFlag reports whether bus's long flag takes no value.
func isBusBoolFlag(flag string) bool {
	return slices.Contains([]string{"--jetstream", "--http-auth", "--tls", "--tlsverify"}, flag)
}
