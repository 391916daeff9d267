package monitor

import (
	"context"
	"time"
)

// Source is what the monitor needs of the server: the whole seam between
// the HTTP front end and the core. The server package implements it (its
// monitorSource adapter); the monitor never reaches the core any other
// way, never reads its fields, and never sees a password or a token.
//
// Every method is safe for concurrent use: handlers run on the HTTP
// server's goroutines, several at once.
type Source interface {
	// Varz, Connz, Subsz, Healthz, Leafz, Accountz, AccountStatz, Routez
	// and Gatewayz build the documents of their endpoints. Connz and
	// Subsz return an error for options they cannot serve (answered
	// 400); Healthz also returns the HTTP status to answer with.
	Varz() Varz
	Connz(ConnzOptions) (*Connz, error)
	Subsz(SubszOptions) (*Subsz, error)
	Healthz(HealthzOptions) (HealthStatus, int)
	Leafz(subs bool) Leafz
	Accountz(acc string) (*Accountz, error)
	AccountStatz(unused bool) *AccountStatz
	Routez() Routez
	Gatewayz() Gatewayz
	// Jsz builds /jsz: JetStream's own document, which the monitor
	// writes as JSON and does not read.
	Jsz(JszOptions) any

	// Counters are the server's totals now, for /metrics, the dashboard
	// and its history.
	Counters() Counters
	// JetStream snapshots JetStream's counters, streams and consumers;
	// nil when JetStream is off. The snapshot is the caller's.
	JetStream() *JetStreamMetrics

	// AuthRequired reports whether authorization is configured (then
	// stored messages and actions need a login).
	AuthRequired() bool
	// Authenticate checks the HTTP Basic login user, pass as the server
	// checks a CONNECT's: the user's Rights, or false. Without
	// authorization everyone gets full rights. The monitor logs a
	// refusal with the user name only.
	Authenticate(user, pass string) (Rights, bool)
	// ServerRights are the server's own rights, for the monitor's own
	// reads (the history's dead-letter check), never for a user's.
	ServerRights() Rights
	// Request sends body to an API subject ($JS.API.…, $BUS.API.…) as a
	// client with the rights from (a value Authenticate or ServerRights
	// returned), and returns the first reply's payload, or an error
	// when no service takes it or ctx ends first.
	Request(ctx context.Context, from Rights, subject string, body []byte) ([]byte, error)
}

// Rights is what the monitor may ask about a logged-in user: the name
// for logs, and whether the user may publish to an API subject, checked
// as a PUB would be. Values come from Source and go back to it.
type Rights interface {
	// User names the user for logs; "" for a token or without
	// authorization.
	User() string
	MayPublish(subject string) bool
}

// Counters are the server's totals at one moment. Traffic counts every
// connection, open and closed, since the server started.
type Counters struct {
	ServerID, ServerName, Version string
	Start                         time.Time
	Connections                   int // open now
	WebSocketConnections          int // of Connections, those of WebSocket clients
	MQTTConnections               int // of Connections, those of MQTT clients (over WebSocket too)
	TotalConnections              int64
	Subscriptions                 int // the clients' (not the server's own)
	InMsgs, InBytes               int64
	OutMsgs, OutBytes             int64
	SlowConsumers                 int64
	AuthFailures                  int64
	Leafs                         []LeafLink // the configured remotes, in order
}

// LeafLink is one configured leaf remote and whether its link is up.
type LeafLink struct {
	Remote string
	Up     bool
}

// JetStreamMetrics is a snapshot of JetStream (jetstream.Metrics, as the
// server converts it): what /metrics, the dashboard and its history read.
type JetStreamMetrics struct {
	Now             time.Time // JetStream's clock, for ages
	StoreDir        string
	APITotal        int64
	APIErrors       int64
	DeadLettered    int64 // messages given up on, all consumers
	DeadLettersLost int64 // dead letters nothing stored
	Damaged         int   // streams on disk that could not be opened
	// MaxMemory and MaxStorage are the limits /varz and /jsz report.
	MaxMemory, MaxStorage int64
	// IndexBytes is what the in-memory indexes of sealed segments hold
	// now (an estimate), IndexMaxBytes their bound (max_index_memory);
	// IndexLoads and IndexEvictions count them loaded and dropped.
	IndexBytes, IndexMaxBytes  int64
	IndexLoads, IndexEvictions uint64
	// OpenFiles are the segment and journal files open now, MaxOpenFiles
	// their bound.
	OpenFiles, MaxOpenFiles int
	// SyncLatency sums every stream's fsync latencies (nanoseconds) and
	// CommitSizes their group commits (messages per commit).
	SyncLatency, CommitSizes Histogram
	// Streams are the global account's ($G), by name: the ones the
	// dashboard shows and acts on.
	Streams []StreamMetrics
	// Accounts are the global account's usage first, then every other
	// account with a JetStream of its own, by name. The counters above
	// (API, dead letters, damaged, index, files, fsync and commit
	// histograms) are the sum over all of them.
	Accounts []AccountJetStreamMetrics
}

// AccountJetStreamMetrics is one account's JetStream in
// JetStreamMetrics: its usage, its reservations (the account's
// jetstream limits; math.MaxUint64 for none, as /jsz writes it) and,
// for every account but the global one, its streams by name.
type AccountJetStreamMetrics struct {
	Name                            string
	Memory, Storage                 uint64
	ReservedMemory, ReservedStorage uint64
	Streams                         []StreamMetrics // nil for $G (see JetStreamMetrics.Streams)
}

// StreamMetrics is one stream in JetStreamMetrics.
type StreamMetrics struct {
	Name                string
	Memory              bool // memory storage
	Msgs, Bytes         uint64
	FirstSeq, LastSeq   uint64
	FirstTime, LastTime time.Time
	NumSubjects         int
	MaxMsgs, MaxBytes   int64 // limits; -1 for none
	DiskBytes           int64
	// DeadLetterQueue is whether the stream captures some consumer's
	// dead-letter subject.
	DeadLetterQueue bool
	Accepted        uint64
	Duplicates      uint64
	Refused         uint64
	AckLatency      Histogram         // nanoseconds
	Consumers       []ConsumerMetrics // by name
}

// ConsumerMetrics is one consumer in StreamMetrics.
type ConsumerMetrics struct {
	Name            string
	NumPending      uint64 // the lag: messages not yet delivered
	NumAckPending   int
	NumRedelivered  int
	NumWaiting      int
	Delivered       SeqPair
	AckFloor        SeqPair
	DeadLettered    int64
	DeadLettersLost int64
	// LastDelivered and LastAcked are zero for never.
	LastDelivered, LastAcked time.Time
	// Oldest is the store time of the oldest message not processed;
	// zero when there is none.
	Oldest time.Time
}

// SeqPair is a consumer sequence and the stream sequence it stands for.
type SeqPair struct {
	Consumer, Stream uint64
}

// Histogram is a snapshot of bucketed observations: Counts[i] counts the
// values at or below Bounds[i] (and above the bound before); Count
// includes those above the last bound. Bounds is shared and read-only.
type Histogram struct {
	Bounds []uint64
	Counts []uint64
	Count  uint64
	Sum    uint64
}
