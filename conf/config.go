package conf

import (
	"log/slog"
	"time"
)

// Log formats accepted by the log_format key.
const (
	LogText = "text" // logfmt-style key=value lines
	LogJSON = "json" // one JSON object per line
)

// Config is the server's configuration as plain values. The zero value is
// not useful: start from Default, or get one from Load, which also validates
// it.
type Config struct {
	Host       string    // interface to listen on for clients
	Port       int       // client port; 0 or -1 picks a free port
	HTTPPort   int       // monitoring port; 0 disables monitoring, -1 picks a free port
	ServerName string    // empty means the server's generated id
	StoreDir   string    // directory for persistent streams
	JetStream  JetStream // persistent streams and the JetStream API (jetstream.go)
	// FeatureFlags are nats-server's feature flags bus knows
	// (featureflags.go).
	FeatureFlags FeatureFlags

	MaxPayload       int64 // largest message payload, in bytes
	MaxControlLine   int64 // longest protocol line, in bytes
	MaxConnections   int   // concurrent client connections
	MaxSubscriptions int   // per connection; 0 means unlimited
	MaxPending       int64 // bytes queued to one connection before it is a slow consumer
	// MaxPendingTotal bounds the bytes queued to all connections together
	// (bus only); 0 means the server's default, 4 × max_pending and at
	// least 256MB.
	MaxPendingTotal int64
	PingInterval    time.Duration // between server PINGs to a client
	MaxPingsOut     int           // unanswered PINGs before a connection is stale
	WriteDeadline   time.Duration // a socket write taking longer marks a slow consumer

	// TLS is the tls block; nil leaves the client port plain. Set only
	// from a file.
	TLS *TLS
	// HTTPSPort serves monitoring over TLS with the tls block's
	// certificate; 0 disables it, -1 picks a free port.
	HTTPSPort int
	// HTTPAuth makes every monitoring path but /healthz (the dashboard
	// included) need the HTTP Basic credentials of a user of the
	// authorization block (bus's own key).
	HTTPAuth bool

	// Authorization is the authorization block; nil lets every client in
	// with every right. Set only from a file.
	Authorization *Authorization
	// MaxUnauthenticated bounds the connections that have yet to send a
	// valid CONNECT when authorization is on (bus's own key).
	MaxUnauthenticated int
	// NoAuthUser names the user of Authorization.Users that a client
	// sending no credentials connects as (a top-level key in nats-server).
	NoAuthUser string
	// Accounts is the accounts block; bus takes only the system account
	// (accounts.go). Set only from a file.
	Accounts *Accounts
	// SystemAccount names the account of Accounts whose users may make
	// the $SYS monitoring requests; "" means "$SYS" if so named.
	SystemAccount string
	// Operator holds the trusted operators' JWTs (operator.go); none: no
	// operator mode. Resolver is where account JWTs come from (MEMORY, or
	// a NATS resolver's directory: resolver.go), and ResolverPreload the
	// account JWTs to start with, by account public key.
	Operator        *Operators
	TrustedKeys     *TrustedKeys // the operators' public keys in place of Operator (trustedkeys.go)
	Resolver        *Resolver
	ResolverPreload *Preload

	// Mappings is the mappings block: subjects a client's publish is
	// routed to instead of its own (docs/mappings.md); nil when absent.
	// Set only from a file.
	Mappings *Mappings

	// LeafNodes is the leafnodes block: the hubs bus joins as a leaf
	// node (leafnodes.go); nil when absent. Set only from a file.
	LeafNodes *LeafNodes

	// WebSocket is the websocket block: the listener for browsers and
	// WebSocket clients (websocket.go); nil when absent. Set only from a
	// file.
	WebSocket *WebSocket

	// MQTT is the mqtt block: the listener for MQTT 3.1.1 devices
	// (mqtt.go); nil when absent. Set only from a file.
	MQTT *MQTT

	// ClientAdvertise is the host[:port] INFO and /varz advertise
	// instead of the listen address; "" advertises that.
	ClientAdvertise string
	// NoHeaderSupport turns message headers off for clients.
	NoHeaderSupport bool

	// Keys nats-server accepts that shape INFO or shutdown in a cluster;
	// bus accepts them so that configs carry over, and has no cluster for
	// them to act on (see bus.example.yaml).
	NoAdvertise           bool          // do not advertise cluster peers to clients
	ConnectErrorReports   int           // log every Nth error connecting to a route
	ReconnectErrorReports int           // log every Nth error reconnecting to a route
	LameDuckDuration      time.Duration // how long lame-duck mode spreads the closing of clients
	LameDuckGracePeriod   time.Duration // wait before lame-duck mode starts closing clients

	LogLevel  slog.Level // one of slog.LevelDebug, LevelInfo, LevelWarn, LevelError
	LogFormat string     // LogText or LogJSON
	PidFile   string     // where bus serve writes its process id ("": nowhere)

	// nats-server's logging keys (logging.go). LogTime stamps each line
	// (logtime), in UTC with LogTimeUTC (logtime_utc). LogFile is a file
	// to log to instead of standard error (log_file); past LogSizeLimit
	// bytes (logfile_size_limit, 0: never) it is renamed with a time
	// suffix and a new one started, and LogMaxFiles (logfile_max_num, 0:
	// all) bounds how many are kept, the current one included. Syslog
	// logs to the local syslog, RemoteSyslog to udp://host:514,
	// tcp://host:514 or unix:///dev/log; LogFile wins over both, as in
	// nats-server.
	LogTime, LogTimeUTC bool
	LogFile             string
	LogSizeLimit        int64
	LogMaxFiles         int
	Syslog              bool
	RemoteSyslog        string
	// Trace logs each connection's protocol traffic (trace);
	// TraceVerbose is trace in bus (trace_verbose). TraceHeaders traces
	// a message's headers instead of its payload (trace_headers), and
	// MaxTracedMsgLen cuts traced payloads (max_traced_msg_len; 0: whole).
	Trace, TraceVerbose, TraceHeaders bool
	MaxTracedMsgLen                   int
}

// Limits that are not defaults. nats-server documents 64MB as the largest
// max_payload; its code allows up to max_pending, and we enforce both.
const (
	maxPayloadLimit = 64 << 20
	maxInt32        = 1<<31 - 1
)

// Default returns the configuration used for every key that no source sets.
// The values are nats-server's defaults.
func Default() Config {
	return Config{
		Host:           "0.0.0.0",
		Port:           4222,
		HTTPPort:       8222,
		StoreDir:       "./data",
		JetStream:      JetStream{Enabled: true},
		MaxPayload:     1 << 20,
		MaxControlLine: 4096,
		MaxConnections: 64 * 1024,
		MaxPending:     64 << 20,
		PingInterval:   2 * time.Minute,
		MaxPingsOut:    2,
		WriteDeadline:  10 * time.Second,

		MaxUnauthenticated: 8192,

		ConnectErrorReports:   3600,
		ReconnectErrorReports: 1,
		LameDuckDuration:      2 * time.Minute,
		LameDuckGracePeriod:   10 * time.Second,

		LogLevel:  slog.LevelInfo,
		LogFormat: LogText,
		LogTime:   true,
	}
}
