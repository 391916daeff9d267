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
	"V": "--trace", "trace": "--trace", "VV": "--trace-verbose",
	"T": "--logtime", "logtime": "--logtime",
	"l": "--log-file", "log": "--log-file",
	"s": "--syslog", "syslog": "--syslog",
	"r": "--remote-syslog", "remote_syslog": "--remote-syslog",
	"log_size_limit": "--logfile-size-limit", "log_max_num": "--logfile-max-num",
}

// natsFlagSets are nats-server's flags that set two of bus's.
var natsFlagSets = map[string][]string{
	"DV":  {"--log-level=debug", "--trace"},
	"DVV": {"--log-level=debug", "--trace-verbose"},
}

// natsBoolFlags take no value in nats-server.
var natsBoolFlags = []string{"js", "jetstream", "D", "debug", "V", "trace", "DV", "VV", "DVV", "T", "logtime", "s", "syslog", "tls", "tlsverify"}

// natsRefused are nats-server flags bus has nothing for, with what to do.
var natsRefused = map[string]string{
	"sl":                "use kill (SIGTERM stops, SIGHUP reloads) or bus ldm for lame-duck mode",
	"signal":            "use kill (SIGTERM stops, SIGHUP reloads) or bus ldm for lame-duck mode",
	"cluster":           "bus runs as a single server and has no cluster; link servers with leafnodes.remotes in the config file",
	"cluster_name":      "bus runs as a single server and has no cluster",
	"cluster_advertise": "bus runs as a single server and has no cluster",
	"routes":            "bus runs as a single server and has no cluster",
	"no_advertise":      "bus runs as a single server and has no cluster",
	"connect_retries":   "bus runs as a single server and has no cluster",
	"ports_file_dir":    "bus writes no ports file; the \"serving\" log line has the bound addresses",
	"profile":           "bus has no profiling port",
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
		}
		if set, ok := natsFlagSets[name]; ok {
			out = append(out, set...)
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
	return slices.Contains([]string{"--jetstream", "--http-auth", "--tls", "--tlsverify", "--trace", "--trace-verbose",
		"--trace-headers", "--logtime", "--logtime-utc", "--syslog", "--no-header-support"}, flag)
}
