package server

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/server/jetstream"
)

// Defaults match the reference nats-server so operators can carry settings over.
const (
	DefaultHost           = "0.0.0.0"
	DefaultPort           = 4222
	DefaultHTTPPort       = 8222
	DefaultMaxPayload     = 1 << 20 // 1 MiB
	DefaultMaxControlLine = 4096
	DefaultMaxConnections = 64 * 1024
	DefaultMaxPending     = 64 << 20 // 64 MiB
	// DefaultMaxPendingTotal bounds what every outbound queue holds
	// together (bus's own; see shed.go): four slow consumers at the
	// per-connection limit.
	DefaultMaxPendingTotal = 4 * DefaultMaxPending
	DefaultPingInterval    = 2 * time.Minute
	DefaultMaxPingsOut     = 2
	DefaultWriteDeadline   = 10 * time.Second
	DefaultStoreDir        = "./data"
)

// Options configures a Server. The zero value of a field means "use the
// default" except where a field documents otherwise; call WithDefaults to see
// the effective values.
type Options struct {
	Host string // listen address for clients
	// Port for clients. 0 picks a free port (see Server.Addr); the binary
	// passes 4222 by default.
	Port int
	// HTTPPort serves monitoring (/healthz, /varz). 0 disables it, -1 picks
	// a free port (see Server.HTTPAddr).
	HTTPPort int

	ServerName string // defaults to the generated server id
	StoreDir   string // where persistent streams live
	// JetStream enables persistent streams and the JetStream API.
	JetStream bool
	// JetStreamDomain also serves the API on $JS.<domain>.API.> and names
	// the domain in publish acks, account info and INFO (nats-server's
	// jetstream { domain }).
	JetStreamDomain string
	// JetStreamMaxMemory and JetStreamMaxStore bound the bytes the memory
	// and the file streams hold together (max_memory_store,
	// max_file_store); 0 means no bound.
	JetStreamMaxMemory, JetStreamMaxStore int64
	// JetStreamSyncInterval, when not 0, is the durability of streams
	// that do not choose one: synced at most this often
	// (x_bus_durability "interval") instead of before every ack
	// (nats-server's sync_interval).
	JetStreamSyncInterval time.Duration
	// JetStreamIndexMemory bounds the bytes the per-message indexes of
	// sealed segments take in memory across every stream
	// (max_index_memory); 0 means jetlog.DefaultIndexCacheBytes.
	JetStreamIndexMemory int64
	// JetStreamMaxOpenFiles bounds the segment and consumer journal
	// files open at once across every stream of every account; 0 means
	// a quarter of the process's descriptor limit, at least 16 and at
	// most 1,024. (No config key sets it: the descriptor limit does.)
	JetStreamMaxOpenFiles int
	// JetStreamLimits and JetStreamBatchLimits bound what clients set on
	// streams, consumers and atomic batches (nats-server's jetstream {
	// limits {} }); zero values leave a bound unset.
	JetStreamLimits      JetStreamLimits
	JetStreamBatchLimits JetStreamBatchLimits
	// JetStreamEncryption encrypts the file streams at rest (nats-server's
	// jetstream { cipher, key, prev_encryption_key }); a zero value stores
	// plaintext. It cannot change on reload.
	JetStreamEncryption JetStreamEncryption
	// JetStreamAckFormatV2 gives consumers' deliveries the v2 ack
	// subjects (nats-server's feature flag js_ack_fc_v2).
	JetStreamAckFormatV2 bool
	// StoreFS is the file system the streams' files go through; nil
	// means the operating system's. It is for fault injection in tests
	// (a full disk or a read-only directory for one stream).
	StoreFS jetlog.FS

	MaxPayload       int   // largest PUB/HPUB body in bytes
	MaxControlLine   int   // longest protocol line in bytes
	MaxConnections   int   // concurrent client connections
	MaxSubscriptions int   // per connection; 0 means unlimited
	MaxPending       int64 // outbound bytes queued per connection before it is a slow consumer
	// MaxPendingTotal bounds the outbound bytes queued on all connections
	// together: past it the connection with the longest queue is closed as
	// a slow consumer (shed.go). 0 means DefaultMaxPendingTotal, or
	// 4 × MaxPending if that is larger; -1 means no bound.
	MaxPendingTotal int64
	PingInterval    time.Duration // between server PINGs
	MaxPingsOut     int           // unanswered PINGs before the connection is stale
	WriteDeadline   time.Duration // a socket write taking longer marks a slow consumer

	// TLS makes the client port speak TLS; the zero value leaves it
	// plain.
	TLS TLSOptions
	// HTTPSPort serves monitoring over TLS with TLS's certificate. 0
	// disables it, -1 picks a free port (see Server.HTTPSAddr).
	HTTPSPort int
	// HTTPAuth makes every monitoring path but /healthz (the dashboard,
	// /varz, /jsz …) need the HTTP Basic credentials of a user of
	// Authorization. Without it the counters are open; the dashboard's
	// stored messages and actions need those credentials whenever
	// Authorization is on, with or without HTTPAuth (docs/dashboard.md).
	HTTPAuth bool

	// Authorization is who may connect and what each user may do; the
	// zero value lets anyone do anything.
	Authorization Authorization
	// SystemAccount holds the users who may make the $SYS.REQ monitoring
	// requests (sysaccount.go); the zero value has none.
	SystemAccount SystemAccount
	// Accounts are the other accounts, each a subject space of its own
	// (account.go); none by default.
	Accounts []Account
	// Operator turns on operator (JWT) mode (operator.go); nil: off.
	Operator *Operator
	// trust is Operator compiled by withOperator, with its accounts
	// added to Accounts.
	trust *trust
	// MaxUnauthenticated bounds the connections that have not yet sent a
	// valid CONNECT when authorization is on; more are refused. 0 means
	// DefaultMaxUnauthenticated.
	MaxUnauthenticated int

	// Mappings reroute clients' publishes (mappings.go); none by default.
	Mappings []Mapping

	// LeafNodes are the hubs bus joins as a leaf node (leaflink.go);
	// none by default.
	LeafNodes LeafNodeOptions

	// WebSocket is the WebSocket listener (ws.go); off by default.
	WebSocket WebSocketOptions

	// MQTT is the MQTT 3.1.1 listener (mqtt.go); off by default.
	MQTT MQTTOptions

	// ClientAdvertise is the host[:port] INFO and /varz give clients
	// instead of the listen address (advertise.go); "" advertises Host
	// and the bound port.
	ClientAdvertise string
	// Trace logs every connection's protocol traffic at LevelTrace
	// (trace.go), as nats-server's trace; TraceVerbose (trace_verbose)
	// is the same in bus, which has no internal system client of its
	// own to trace besides. TraceHeaders traces a message's headers
	// instead of its payload; MaxTracedMsgLen cuts a traced payload
	// (0: whole). All reloadable.
	Trace, TraceVerbose, TraceHeaders bool
	MaxTracedMsgLen                   int

	// NoHeaderSupport turns message headers off: INFO says headers
	// false, an HPUB closes the connection and subscribers get messages
	// without their headers, as in the reference.
	NoHeaderSupport bool

	// LameDuckDuration is the time LameDuck spreads the closing of the
	// clients over, LameDuckGracePeriod (less than it) the wait before the
	// first close; 0 means DefaultLameDuckDuration and
	// DefaultLameDuckGracePeriod.
	LameDuckDuration    time.Duration
	LameDuckGracePeriod time.Duration

	// FirstPingDelay caps the delay before the first PING after CONNECT; the
	// reference sends its first PING about 2 s in, whatever PingInterval is.
	FirstPingDelay time.Duration

	Logger *slog.Logger // nil discards logs
}

// WithDefaults returns a copy of o with every unset field at its default.
func (o Options) WithDefaults() Options {
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.StoreDir == "" {
		o.StoreDir = DefaultStoreDir
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.MaxControlLine == 0 {
		o.MaxControlLine = DefaultMaxControlLine
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxPending == 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxPendingTotal == 0 {
		o.MaxPendingTotal = max(DefaultMaxPendingTotal, 4*o.MaxPending)
	}
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.MaxPingsOut == 0 {
		o.MaxPingsOut = DefaultMaxPingsOut
	}
	if o.WriteDeadline == 0 {
		o.WriteDeadline = DefaultWriteDeadline
	}

	if o.TLS.Timeout == 0 {
		o.TLS.Timeout = DefaultTLSTimeout
	}
	if o.Authorization.Timeout == 0 {
		// As in the reference: with TLS, a second more than the
		// handshake may take.
		o.Authorization.Timeout = DefaultAuthTimeout
		if o.TLS.enabled() {
			o.Authorization.Timeout = o.TLS.Timeout + time.Second
		}
	}
	if o.MaxUnauthenticated == 0 {
		o.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	if o.LameDuckDuration == 0 {
		o.LameDuckDuration = DefaultLameDuckDuration
	}
	if o.LameDuckGracePeriod == 0 {
		o.LameDuckGracePeriod = DefaultLameDuckGracePeriod
	}
	if o.FirstPingDelay == 0 {
		o.FirstPingDelay = 2 * time.Second
	}
	o.LeafNodes = o.LeafNodes.withDefaults()
	o.WebSocket = o.WebSocket.withDefaults()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// validate reports the first option that cannot work, naming it.
func (o Options) validate() error {
	switch {
	case o.Port < 0 || o.Port > 65535:
		return fmt.Errorf("server: port %d out of range 0..65535", o.Port)
	case o.HTTPPort < -1 || o.HTTPPort > 65535:
		return fmt.Errorf("server: http port %d out of range -1..65535", o.HTTPPort)
	case o.MaxPayload < 0:
		return fmt.Errorf("server: max payload %d is negative", o.MaxPayload)
	case o.MaxControlLine < 0:
		return fmt.Errorf("server: max control line %d is negative", o.MaxControlLine)
	case o.MaxConnections < 0:
		return fmt.Errorf("server: max connections %d is negative", o.MaxConnections)
	case o.MaxSubscriptions < 0:
		return fmt.Errorf("server: max subscriptions %d is negative", o.MaxSubscriptions)
	case o.MaxPending < 0:
		return fmt.Errorf("server: max pending %d is negative", o.MaxPending)
	case o.JetStreamDomain != "" && !jetstream.ValidDomain(o.JetStreamDomain):
		return fmt.Errorf("server: invalid JetStream domain %q: may not contain ., * or >", o.JetStreamDomain)
	case o.JetStreamMaxMemory < 0 || o.JetStreamMaxStore < 0:
		return fmt.Errorf("server: JetStream storage limits must not be negative")
	case o.JetStreamEncryption.Check() != nil:
		return fmt.Errorf("server: %w", o.JetStreamEncryption.Check())
	case o.MaxPendingTotal < -1 || o.MaxPendingTotal > 0 && o.MaxPendingTotal < o.MaxPending:
		return fmt.Errorf("server: max pending total %d must be -1 (no bound) or at least max pending %d", o.MaxPendingTotal, o.MaxPending)
	case o.PingInterval < 0 || o.WriteDeadline < 0 || o.FirstPingDelay < 0:
		return fmt.Errorf("server: durations must not be negative")
	case o.LameDuckDuration < 0 || o.LameDuckGracePeriod < 0:
		return fmt.Errorf("server: lame duck duration and grace period must not be negative")
	case o.LameDuckGracePeriod >= o.LameDuckDuration:
		// The reference's rule and words.
		return fmt.Errorf("server: lame duck grace period (%v) should be strictly lower than lame duck duration (%v)", o.LameDuckGracePeriod, o.LameDuckDuration)
	case o.MaxTracedMsgLen < 0:
		return fmt.Errorf("server: max traced msg len %d is negative", o.MaxTracedMsgLen)
	case o.MaxPingsOut < 0:
		return fmt.Errorf("server: max pings out %d is negative", o.MaxPingsOut)
	case o.MaxUnauthenticated < 0:
		return fmt.Errorf("server: max unauthenticated %d is negative", o.MaxUnauthenticated)
	case o.HTTPSPort < -1 || o.HTTPSPort > 65535:
		return fmt.Errorf("server: https port %d out of range -1..65535", o.HTTPSPort)
	case o.HTTPSPort != 0 && !o.TLS.enabled():
		return fmt.Errorf("server: https port needs the tls block's certificate")
	case o.HTTPAuth && !o.Authorization.required():
		return fmt.Errorf("server: http auth needs authorization (users, a user or a token) to check credentials against")
	case o.TLS.VerifyAndMap && o.Authorization.Users == nil && !o.accountsHaveUsers():
		return fmt.Errorf("server: tls verify_and_map needs users (authorization's or an account's) to map certificates to")
	}
	if err := o.TLS.validate(); err != nil {
		return err
	}
	if _, _, err := advertised(o.ClientAdvertise, 0); err != nil {
		return err
	}
	if err := o.Authorization.validate(); err != nil {
		return err
	}
	if err := o.Authorization.Callout.validate(o); err != nil {
		return err
	}
	if err := o.LeafNodes.validate(); err != nil {
		return err
	}
	if err := o.WebSocket.validate(); err != nil {
		return err
	}
	if err := o.validateWebSocketAuth(); err != nil {
		return err
	}
	if err := o.MQTT.validate(); err != nil {
		return err
	}
	if err := o.validateMQTTAuth(); err != nil {
		return err
	}
	if err := o.SystemAccount.validate(o.Authorization); err != nil {
		return err
	}
	return validateAccounts(o)
}

// accountsHaveUsers says some account of the accounts block has users,
// which verify_and_map can map certificates to as the reference does
// without a top-level users list.
func (o *Options) accountsHaveUsers() bool {
	for _, a := range o.Accounts {
		if len(a.Users) > 0 {
			return true
		}
	}
	return false
}
