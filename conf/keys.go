package conf

import (
	"slices"
	"strings"
)

// key is one setting: its name in files, the names the other sources derive
// from it, and the Config field it sets.
type key struct {
	name    string   // lowercase, words joined by "_"; "." separates a section
	aliases []string // nats-server spellings also accepted in files
	usage   string   // one line for --help
	value   value    // bound to one field of a Config
	// fileOnly keys hold a block (a map or list) that only a file can
	// express: they have no flag and no environment variable.
	fileOnly bool
}

// keys lists every setting, bound to the fields of c. The order is the
// order of --help and of bus.example.yaml.
func keys(c *Config) []key {
	return []key{
		{name: "host", aliases: []string{"net"}, value: stringValue{&c.Host},
			usage: "interface to listen on for clients"},
		{name: "port", value: intValue{&c.Port},
			usage: "client port; 0 or -1 picks a free port"},
		{name: "http_port", aliases: []string{"monitor_port"}, value: intValue{&c.HTTPPort},
			usage: "monitoring port (/healthz, /varz); 0 disables, -1 picks a free port"},
		{name: "server_name", value: stringValue{&c.ServerName},
			usage: "name reported to clients and in monitoring (default: the server id)"},
		{name: "store_dir", aliases: []string{"storedir"}, value: stringValue{&c.StoreDir},
			usage: "directory for persistent streams"},
		{name: "jetstream", value: jetstreamValue{&c.JetStream, &c.StoreDir},
			usage: "enable persistent streams and the JetStream API (in a file, also nats-server's jetstream { } block)"},
		{name: "max_payload", value: sizeValue{&c.MaxPayload},
			usage: "largest message payload, at most 64MB and max_pending"},
		{name: "max_control_line", value: sizeValue{&c.MaxControlLine},
			usage: "longest protocol line"},
		{name: "max_connections", aliases: []string{"max_conn"}, value: intValue{&c.MaxConnections},
			usage: "concurrent client connections"},
		{name: "max_subscriptions", aliases: []string{"max_subs"}, value: intValue{&c.MaxSubscriptions},
			usage: "subscriptions per connection; 0 means unlimited"},
		{name: "max_pending", value: sizeValue{&c.MaxPending},
			usage: "bytes queued to one connection before it is closed as a slow consumer"},
		{name: "max_pending_total", value: sizeValue{&c.MaxPendingTotal},
			usage: "bytes queued to all connections together before the longest queue is closed as a slow consumer (bus only; 0: 4 × max_pending, at least 256MB)"},
		{name: "ping_interval", value: durationValue{&c.PingInterval},
			usage: "time between server PINGs to a client"},
		{name: "max_pings_out", aliases: []string{"ping_max"}, value: intValue{&c.MaxPingsOut},
			usage: "unanswered PINGs before a connection is closed as stale"},
		{name: "write_deadline", value: durationValue{&c.WriteDeadline},
			usage: "a socket write taking longer closes the connection as a slow consumer"},
		{name: "tls", value: tlsValue{&c.TLS}, fileOnly: true,
			usage: "TLS for the client port (file only; see bus.example.yaml)"},
		{name: "https_port", value: intValue{&c.HTTPSPort},
			usage: "monitoring port over TLS with the tls block's certificate; 0 disables, -1 picks a free port"},
		{name: "http_auth", value: boolValue{&c.HTTPAuth},
			usage: "monitoring reads (dashboard, /varz …; not /healthz) need a configured user's name and password (bus only)"},
		{name: "authorization", value: authValue{&c.Authorization}, fileOnly: true,
			usage: "who may connect and what each user may do (file only; see bus.example.yaml)"},
		{name: "max_unauthenticated", value: intValue{&c.MaxUnauthenticated},
			usage: "connections yet to authenticate before new ones are refused (bus only)"},
		{name: "no_auth_user", value: stringValue{&c.NoAuthUser},
			usage: "user of the authorization block that clients sending no credentials connect as"},
		{name: "accounts", value: accountsValue{&c.Accounts}, fileOnly: true,
			usage: "accounts, each a subject space of its own with its users, mappings and limits, and the system account (file only; see docs/security.md)"},
		{name: "system_account", aliases: []string{"system"}, value: stringValue{&c.SystemAccount},
			usage: "the account of the accounts block whose users may make the $SYS requests (default: $SYS)"},
		{name: "operator", aliases: []string{"operators", "root_operator", "root_operators"}, value: operatorValue{&c.Operator}, fileOnly: true,
			usage: "operator mode: the trusted operator's JWT, or a path to it, or a list (file only; see docs/security.md)"},
		{name: "trusted_keys", aliases: []string{"trusted"}, value: trustedKeysValue{&c.TrustedKeys}, fileOnly: true,
			usage: "operator mode: the trusted operators' public keys, in place of their JWTs (file only; see docs/security.md)"},
		{name: "resolver", value: resolverValue{&c.Resolver}, fileOnly: true,
			usage: "operator mode: where account JWTs come from: MEMORY, or a block { type: full|cache, dir: ... } (file only; see docs/security.md)"},
		{name: "resolver_preload", value: preloadValue{&c.ResolverPreload}, fileOnly: true,
			usage: "operator mode: account JWTs by account public key to start with (file only)"},
		{name: "mappings", aliases: []string{"maps"}, value: mappingsValue{&c.Mappings}, fileOnly: true,
			usage: "subject mappings applied to clients' publishes (file only; see docs/mappings.md)"},
		{name: "feature_flags", value: featureFlagsValue{&c.FeatureFlags}, fileOnly: true,
			usage: "nats-server's feature flags bus knows: js_ack_fc_v2 (file only; see docs/api.md)"},
		{name: "leafnodes", aliases: []string{"leaf"}, value: leafNodesValue{&c.LeafNodes}, fileOnly: true,
			usage: "hubs to join as a leaf node: remotes with url, credentials or nkey, tls (file only; see bus.example.yaml)"},
		{name: "websocket", aliases: []string{"ws"}, value: webSocketValue{&c.WebSocket}, fileOnly: true,
			usage: "the WebSocket listener for browsers: host, port, tls or no_tls, allowed_origins, compression (file only; see bus.example.yaml)"},
		{name: "mqtt", value: mqttValue{&c.MQTT}, fileOnly: true,
			usage: "the MQTT 3.1.1 listener for devices: host, port, tls, authorization, no_auth_user, ack_wait, max_ack_pending (file only; see docs/mqtt.md)"},
		{name: "client_advertise", value: stringValue{&c.ClientAdvertise},
			usage: "host[:port] advertised to clients in INFO and /varz instead of the listen address"},
		{name: "no_header_support", value: boolValue{&c.NoHeaderSupport},
			usage: "turn message headers off (INFO headers false; HPUB closes the connection)"},
		{name: "no_advertise", value: boolValue{&c.NoAdvertise},
			usage: "do not advertise cluster peers to clients (nats-server compatibility; no effect)"},
		{name: "connect_error_reports", value: intValue{&c.ConnectErrorReports},
			usage: "log every Nth route connect error (nats-server compatibility; no effect)"},
		{name: "reconnect_error_reports", value: intValue{&c.ReconnectErrorReports},
			usage: "log every Nth route reconnect error (nats-server compatibility; no effect)"},
		{name: "lame_duck_duration", value: durationValue{&c.LameDuckDuration},
			usage: "time lame-duck mode (SIGUSR2, bus ldm) spreads the closing of clients over"},
		{name: "lame_duck_grace_period", value: durationValue{&c.LameDuckGracePeriod},
			usage: "wait before lame-duck mode closes the first client; less than lame_duck_duration"},
		{name: "log_level", value: levelValue{&c.LogLevel},
			usage: "least severe level logged: " + strings.Join(levelNames(), ", ")},
		{name: "pid_file", aliases: []string{"pidfile"}, value: stringValue{&c.PidFile},
			usage: "file to write the process id to while the server runs (for bus ldm --pid-file and init systems)"},
		{name: "log_format", value: choiceValue{&c.LogFormat, []string{LogText, LogJSON}},
			usage: "log line format: text or json"},
		{name: "logtime", value: boolValue{&c.LogTime},
			usage: "stamp each log line with the time"},
		{name: "logtime_utc", value: boolValue{&c.LogTimeUTC},
			usage: "log times in UTC instead of local time"},
		{name: "log_file", aliases: []string{"logfile"}, value: stringValue{&c.LogFile},
			usage: "file to log to instead of standard error"},
		{name: "logfile_size_limit", aliases: []string{"log_size_limit"}, value: sizeValue{&c.LogSizeLimit},
			usage: "rotate log_file past this size; 0 never rotates"},
		{name: "logfile_max_num", aliases: []string{"log_max_num"}, value: intValue{&c.LogMaxFiles},
			usage: "log files kept after rotation, the current one included; 0 keeps all"},
		{name: "syslog", value: boolValue{&c.Syslog},
			usage: "log to the local syslog"},
		{name: "remote_syslog", value: stringValue{&c.RemoteSyslog},
			usage: "log to a remote syslog: udp://host:514, tcp://host:514 or unix:///dev/log"},
		{name: "trace", value: boolValue{&c.Trace},
			usage: "log each connection's protocol traffic (nats-server's -V)"},
		{name: "trace_verbose", value: boolValue{&c.TraceVerbose},
			usage: "trace, as nats-server's -VV (bus has no internal system client to trace besides)"},
		{name: "trace_headers", value: boolValue{&c.TraceHeaders},
			usage: "trace a message's headers instead of its payload"},
		{name: "max_traced_msg_len", value: intValue{&c.MaxTracedMsgLen},
			usage: "longest payload traced; longer ones are cut; 0 traces them whole"},
	}
}

// flag is the key's command-line flag: max_payload is max-payload.
func (k key) flag() string {
	return strings.NewReplacer("_", "-", ".", "-").Replace(k.name)
}

// env is the key's environment variable: max_payload is BUS_MAX_PAYLOAD.
func (k key) env() string {
	return "BUS_" + strings.ToUpper(strings.ReplaceAll(k.name, ".", "_"))
}

// keySet indexes keys by file name, alias and environment variable.
type keySet struct {
	list    []key
	byName  map[string]key    // file name, aliases included
	byEnv   map[string]key    // BUS_… variable
	aliasOf map[string]string // alias → key name
}

func newKeySet(c *Config) keySet {
	ks := keySet{
		list:    keys(c),
		byName:  map[string]key{},
		byEnv:   map[string]key{},
		aliasOf: map[string]string{},
	}
	for _, k := range ks.list {
		ks.byName[k.name] = k
		if !k.fileOnly {
			ks.byEnv[k.env()] = k
		}
		for _, a := range k.aliases {
			ks.byName[a] = k
			ks.aliasOf[a] = k.name
		}
	}
	return ks
}

// isSection reports whether name is a section holding keys, such as "tls"
// once there is a "tls.cert_file".
func (ks keySet) isSection(name string) bool {
	return slices.ContainsFunc(ks.list, func(k key) bool { return strings.HasPrefix(k.name, name+".") })
}

// names lists the key names (not aliases), for hints.
func (ks keySet) names() []string {
	out := make([]string, len(ks.list))
	for i, k := range ks.list {
		out[i] = k.name
	}
	return out
}

// envNames lists the environment variables, for hints.
func (ks keySet) envNames() []string {
	out := make([]string, 0, len(ks.list))
	for _, k := range ks.list {
		if !k.fileOnly {
			out = append(out, k.env())
		}
	}
	return out
}
