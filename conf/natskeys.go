package conf

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
)

// nats-server's top-level keys that bus has no key of the same name for,
// in every file format (so a YAML file written from a .conf behaves the
// same). Each is one of:
//
//   - spelled differently: listen is host and port, http and https are
//     http_port and https_port, debug is log_level: debug;
//   - accepted when off, since off asks for nothing bus lacks, and
//     refused when on (no_system_account: true), with what to do;
//   - refused whatever its value, with what to do (cluster);
//   - a pure tuning knob of the reference's internals that changes
//     nothing a client or monitor can see: accepted, dropped, and listed
//     by IgnoredKeys for a warning.
//
// Keys bus implements under nats-server's own name (port, tls, accounts,
// …) are in keys.go; docs/config.md is the table for users.

// removeIt is what to do about most keys bus does not implement.
const removeIt = "remove it"

// unsupportedKeys are refused whatever their value.
var unsupportedKeys = map[string]string{
	"cluster":                  "bus runs as a single server and has no cluster (routes); " + removeIt + ", and link servers with leafnodes.remotes",
	"gateway":                  "bus has no gateways; " + removeIt + ", and link servers with leafnodes.remotes",
	"root":                     noJWT,
	"roots":                    noJWT,
	"account_resolver":         noJWT,
	"accounts_resolver":        noJWT,
	"resolver_tls":             noJWT,
	"resolver_pinned_accounts": noJWT,
	"default_sentinel":         noJWT,
	"http_base_path":           "bus serves monitoring at /; " + removeIt + " (a reverse proxy can add a prefix)",
	"ports_file_dir":           "bus writes no ports file; " + removeIt + " (the \"serving\" log line has the bound addresses)",
	"prof_port":                "bus has no profiling port; " + removeIt,
	"proxy_protocol":           "bus does not read PROXY protocol headers; " + removeIt,
	"proxies":                  "bus does not take client addresses from proxies; " + removeIt,
	"max_sub_tokens":           "bus does not limit the tokens of a subscription; " + removeIt,
	"max_subscription_tokens":  "bus does not limit the tokens of a subscription; " + removeIt,
	"ocsp":                     "bus does not staple OCSP responses; " + removeIt,
	"ocsp_cache":               "bus does not check OCSP; " + removeIt,
	"server_tags":              "bus reports no server tags; " + removeIt,
	"server_metadata":          "bus reports no server metadata; " + removeIt,
	"default_js_domain":        "bus has one JetStream domain, set with jetstream.domain; " + removeIt,
	"max_closed_clients":       "bus does not size its list of closed connections by this key; " + removeIt,
	"write_timeout":            "bus always closes a connection whose write takes longer than write_deadline; " + removeIt,
}

// noJWT is why the keys of nats-server's decentralized (JWT) auth are
// refused.
const noJWT = "bus's operator mode takes operator, system_account, resolver (MEMORY, full or cache) and resolver_preload only; " + removeIt

// offOnlyKeys are accepted when off (false, "", 0) and refused when on.
var offOnlyKeys = map[string]string{
	"no_system_account": noNoSys,
	"no_system":         noNoSys,
	"no_sys_acc":        noNoSys,
	"allow_non_tls":     "with the tls block bus requires TLS of every client; " + removeIt,
}

const noNoSys = "bus has a system account only when the accounts block has one; " + removeIt + " and leave the system account out"

// tuningKeys change how nats-server works inside, not what bus or its
// clients observe: bus has no sublist cache to disable, no profiler
// whose block rate to set, and never stalls fast producers.
var tuningKeys = []string{
	"disable_sublist_cache", "no_sublist_cache", "prof_block_rate", "no_fast_producer_stall",
}

// jetstreamTuningKeys are the jetstream block's tuning keys: catch-up,
// placement and compression negotiation of a JetStream cluster, which bus
// is not, and the sizes of the reference's internal queues.
var jetstreamTuningKeys = []string{
	"max_outstanding_catchup", "max_buffered_msgs", "max_buffered_size", "request_queue_limit",
	"unique_tag", "compress_ok",
}

// jetstreamUnsupported are the jetstream block's keys bus refuses.
var jetstreamUnsupported = map[string]string{
	"tpm": noTPM,
}

const noTPM = "bus does not read keys sealed in a TPM; " + removeIt + " and give the key as jetstream.key (from an environment variable: key: $NAME)"

// natsKeys rewrites nats-server's spellings at the top level of a file's
// settings (keys lowercased) into bus's keys, refusing what bus does not
// implement. It returns the rewritten settings, the refusals, and the
// tuning keys it dropped, sorted.
func natsKeys(settings map[string]any, source string) (map[string]any, []*KeyError, []string) {
	out := maps.Clone(settings)
	var errs []*KeyError
	var tuning []string
	refuse := func(key, reason string, err error) {
		errs = append(errs, &KeyError{Key: key, Source: source, Reason: reason, Err: err})
		delete(out, key)
	}
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		val := settings[name]
		if reason, ok := unsupportedKeys[name]; ok {
			refuse(name, reason, ErrUnsupportedKey)
			continue
		}
		if reason, ok := offOnlyKeys[name]; ok {
			if !isOff(val) && !isZero(val) {
				refuse(name, reason, ErrUnsupportedKey)
				continue
			}
			delete(out, name)
			continue
		}
		if slices.Contains(tuningKeys, name) {
			tuning = append(tuning, name)
			delete(out, name)
			continue
		}
		switch name {
		case "debug":
			delete(out, name)
			if isOff(val) {
				continue
			}
			var on bool
			if err := (boolValue{&on}).set(val); err != nil {
				refuse(name, err.Error(), ErrBadValue)
				continue
			}
			if _, set := settings["log_level"]; set {
				refuse(name, "sets log_level: debug, which is also set", ErrDuplicateKey)
				continue
			}
			out["log_level"] = "debug"
		case "listen", "http", "https":
			delete(out, name)
			portKey := map[string]string{"listen": "port", "http": "http_port", "https": "https_port"}[name]
			host, port, err := hostPort(val)
			if err != nil {
				refuse(name, err.Error(), ErrBadValue)
				continue
			}
			if _, set := settings[portKey]; set || portKey == "http_port" && settings["monitor_port"] != nil {
				refuse(name, "sets "+portKey+", which is also set", ErrDuplicateKey)
				continue
			}
			out[portKey] = port
			if host == "" {
				continue
			}
			if name == "listen" {
				if settings["host"] != nil || settings["net"] != nil {
					refuse(name, "sets host, which is also set", ErrDuplicateKey)
					continue
				}
				out["host"] = host
				continue
			}
			// bus serves monitoring on the client interface.
			if clientHost := fileHost(settings); host != clientHost {
				refuse(name, fmt.Sprintf("bus serves monitoring on the client interface (%s), not on %s of its own; write %s: %d, or set host", clientHost, host, name, port), ErrUnsupportedKey)
				delete(out, portKey)
			}
		case "jetstream":
			js, ok := val.(map[string]any)
			if !ok {
				continue
			}
			js = maps.Clone(js)
			for _, k := range slices.Sorted(maps.Keys(js)) {
				if slices.Contains(jetstreamTuningKeys, k) {
					tuning = append(tuning, "jetstream."+k)
					delete(js, k)
				} else if reason, ok := jetstreamUnsupported[k]; ok {
					errs = append(errs, &KeyError{Key: "jetstream." + k, Source: source, Reason: reason, Err: ErrUnsupportedKey})
					delete(js, k)
				}
			}
			out[name] = js
		}
	}
	slices.Sort(tuning)
	return out, errs, tuning
}

// hostPort reads listen, http or https: a port number, or "host:port".
func hostPort(val any) (string, int64, error) {
	if n, ok := number(val); ok {
		return "", n, nil
	}
	s, ok := val.(string)
	if !ok {
		return "", 0, fmt.Errorf("%s is not a port or host:port", describe(val))
	}
	host, p, err := net.SplitHostPort(strings.TrimSpace(s))
	if err != nil {
		return "", 0, fmt.Errorf("%s is not a port or host:port", describe(val))
	}
	port, err := strconv.ParseInt(p, 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("%s has no port number", describe(val))
	}
	return host, port, nil
}

// fileHost is the client interface the settings ask for: host, net, the
// host of listen, or the default.
func fileHost(settings map[string]any) string {
	for _, k := range []string{"host", "net"} {
		if s, ok := settings[k].(string); ok {
			return s
		}
	}
	if host, _, err := hostPort(settings["listen"]); err == nil && host != "" {
		return host
	}
	return Default().Host
}

// isZero reports whether a value is empty: "" or the number 0.
func isZero(raw any) bool {
	if s, ok := raw.(string); ok {
		return strings.TrimSpace(s) == ""
	}
	n, ok := number(raw)
	return ok && n == 0
}

// IgnoredKeys lists the tuning keys of nats-server (natskeys.go) that
// the config file at path sets, sorted: bus accepts and ignores them,
// and the caller warns. It is nil for "" and for a file Load refuses.
func IgnoredKeys(path string) []string {
	if path == "" {
		return nil
	}
	settings, err := readFile(path)
	if err != nil {
		return nil
	}
	_, _, tuning := natsKeys(settings, "")
	return tuning
}
