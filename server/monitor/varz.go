package monitor

import "time"

// Varz is the /varz document, with the reference's field names and
// shapes. Timeouts are in seconds, durations in nanoseconds.
type Varz struct {
	Identity
	AuthRequired     bool          `json:"auth_required,omitempty"`
	TLSRequired      bool          `json:"tls_required,omitempty"`
	TLSVerify        bool          `json:"tls_verify,omitempty"`
	ConnectURLs      []string      `json:"connect_urls,omitempty"` // none without a cluster
	MaxConnections   int           `json:"max_connections"`
	MaxSubscriptions int           `json:"max_subscriptions,omitempty"`
	PingInterval     time.Duration `json:"ping_interval"`
	MaxPingsOut      int           `json:"ping_max"`
	HTTPHost         string        `json:"http_host"`
	HTTPPort         int           `json:"http_port"`
	HTTPBasePath     string        `json:"http_base_path"`
	HTTPSPort        int           `json:"https_port"`
	AuthTimeout      float64       `json:"auth_timeout"`
	MaxControlLine   int           `json:"max_control_line"`
	MaxPayload       int           `json:"max_payload"`
	MaxPending       int64         `json:"max_pending"`
	Cluster          struct{}      `json:"cluster"`
	Gateway          struct{}      `json:"gateway"`
	LeafNode         struct{}      `json:"leaf"`
	MQTT             MQTTVarz      `json:"mqtt"`
	Websocket        WebSocketVarz `json:"websocket"`
	// JetStream is JetStream's own section (jetstream.Varz), written as
	// it is; the server always sets it (its zero value is written {}).
	JetStream        any               `json:"jetstream"`
	TLSTimeout       float64           `json:"tls_timeout"`
	WriteDeadline    time.Duration     `json:"write_deadline"`
	Start            time.Time         `json:"start"`
	Now              time.Time         `json:"now"`
	Uptime           string            `json:"uptime"`
	Mem              int64             `json:"mem"`
	Cores            int               `json:"cores"`
	MaxProcs         int               `json:"gomaxprocs"`
	CPU              float64           `json:"cpu"`
	Connections      int               `json:"connections"`
	TotalConnections int64             `json:"total_connections"`
	Routes           int               `json:"routes"`
	Remotes          int               `json:"remotes"`
	Leafs            int               `json:"leafnodes"`
	InMsgs           int64             `json:"in_msgs"`
	InBytes          int64             `json:"in_bytes"`
	InClientMsgs     int64             `json:"in_client_msgs"`
	InClientBytes    int64             `json:"in_client_bytes"`
	OutMsgs          int64             `json:"out_msgs"`
	OutBytes         int64             `json:"out_bytes"`
	OutClientMsgs    int64             `json:"out_client_msgs"`
	OutClientBytes   int64             `json:"out_client_bytes"`
	SlowConsumers    int64             `json:"slow_consumers"`
	StaleConnections int64             `json:"stale_connections"`
	StalledClients   int64             `json:"stalled_clients"`
	Subscriptions    int               `json:"subscriptions"`
	HTTPReqStats     map[string]uint64 `json:"http_req_stats"`
	ConfigLoadTime   time.Time         `json:"config_load_time"`
	ConfigDigest     string            `json:"config_digest"`
	Tags             []string          `json:"tags,omitempty"`
	// SystemAccount is empty (left out) without a system account.
	SystemAccount        string     `json:"system_account,omitempty"`
	SlowConsumerStats    *KindStats `json:"slow_consumer_stats"`
	StaleConnectionStats *KindStats `json:"stale_connection_stats,omitempty"`
}

// WebSocketVarz is /varz's websocket section, the reference's fields
// that bus has; all empty (written {}) without a WebSocket listener.
type WebSocketVarz struct {
	Host             string        `json:"host,omitempty"`
	Port             int           `json:"port,omitempty"`
	Advertise        string        `json:"advertise,omitempty"`
	NoAuthUser       string        `json:"no_auth_user,omitempty"`
	HandshakeTimeout time.Duration `json:"handshake_timeout,omitempty"`
	AuthTimeout      float64       `json:"auth_timeout,omitempty"` // seconds; the block's own only
	NoTLS            bool          `json:"no_tls,omitempty"`
	SameOrigin       bool          `json:"same_origin,omitempty"`
	AllowedOrigins   []string      `json:"allowed_origins,omitempty"`
	Compression      bool          `json:"compression,omitempty"`
}

// MQTTVarz is /varz's mqtt section, the reference's fields that bus
// has; all empty (written {}) without an MQTT listener.
type MQTTVarz struct {
	Host        string  `json:"host,omitempty"`
	Port        int     `json:"port,omitempty"`
	NoAuthUser  string  `json:"no_auth_user,omitempty"`
	AuthTimeout float64 `json:"auth_timeout,omitempty"` // seconds; the block's own only
	TLSTimeout  float64 `json:"tls_timeout,omitempty"`  // seconds
	// AckWait (nanoseconds) and MaxAckPending are the block's, as set
	// (0, left out, for the defaults), as the reference shows them.
	AckWait       int64 `json:"ack_wait,omitempty"`
	MaxAckPending int   `json:"max_ack_pending,omitempty"`
}

// KindStats splits a count by connection kind; bus has clients only.
type KindStats struct {
	Clients  uint64 `json:"clients"`
	Routes   uint64 `json:"routes"`
	Gateways uint64 `json:"gateways"`
	Leafs    uint64 `json:"leafs"`
}

// Identity is who a server is, as INFO and /varz both report it.
type Identity struct {
	ServerID   string `json:"server_id"`
	ServerName string `json:"server_name"`
	Version    string `json:"version"`
	Proto      int    `json:"proto"`
	Go         string `json:"go"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
}
