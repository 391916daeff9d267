package conf

import (
	"maps"
	"slices"
	"time"
)

// The mqtt key is nats-server's block for its MQTT listener, with its
// key names and aliases (v2.15.2):
//
//	mqtt {
//	  host: 0.0.0.0, port: 1883      # or listen: "0.0.0.0:1883"
//	  tls { cert_file, key_file, ca_file, verify, timeout }
//	  authorization { user: dev, password: s3cr3t, timeout: 2 }  # or token
//	  no_auth_user: device
//	  reject_qos2_publish: true
//	  downgrade_qos2_subscribe: true
//	}
//
// The keys that tune how QoS 1 messages and sessions are stored in
// JetStream are read and range-checked as the reference does: ack_wait,
// max_ack_pending, js_api_timeout, consumer_memory_storage and
// consumer_inactive_threshold work as there; js_domain, stream_replicas
// and consumer_replicas are refused, naming the key, unless they hold
// their off value (a single bus has no other domain and no replicas;
// docs/mqtt.md).

// MQTT is the mqtt block.
type MQTT struct {
	Host string
	// Port is 0 for nats-server's default (1883) when the block is
	// present without one; -1 picks a free port.
	Port int
	TLS  *TLS // nil: plain TCP
	// Authorization is the block's own user and password or token, for
	// MQTT clients in place of the top-level ones.
	Authorization *WebSocketAuth
	NoAuthUser    string
	// RejectQoS2Publish closes the connection of a client that publishes
	// at QoS 2, and refuses a QoS 2 will (CONNACK 0x10), as the reference.
	RejectQoS2Publish bool
	// DowngradeQoS2Subscribe grants a QoS 2 subscription at most QoS 1.
	DowngradeQoS2Subscribe bool
	// AckWait is how long a QoS 1 delivery waits for its PUBACK before
	// it is sent again (0: the reference's 30 s).
	AckWait time.Duration
	// MaxAckPending bounds the QoS 1 deliveries a session has unacked
	// (0: the reference's 1024).
	MaxAckPending int
	// JSAPITimeout bounds each JetStream request the listener makes
	// (0: the reference's 5 s).
	JSAPITimeout time.Duration
	// ConsumerMemoryStorage and ConsumerInactiveThreshold go into the
	// consumers of QoS 1 subscriptions.
	ConsumerMemoryStorage     bool
	ConsumerInactiveThreshold time.Duration
}

// DefaultMQTTPort is the port of an mqtt block without one, MQTT's and
// nats-server's default.
const DefaultMQTTPort = 1883

// mqttMaxAckPending is the reference's bound on max_ack_pending: the
// packet identifiers a session has.
const mqttMaxAckPending = 0xFFFF

// mqttNotStored is why the storage tuning keys are refused.
const mqttNotStored = "a single bus has no other JetStream domain and no replicas (docs/mqtt.md); remove it"

// mqtt parses the block.
func (p *blockParser) mqtt(raw any) *MQTT {
	m, ok := p.block("", raw)
	if !ok {
		return nil
	}
	known := [][]string{
		{"host", "net"}, {"port"}, {"listen"}, {"tls"}, {"authorization", "authentication"}, {"no_auth_user"},
		{"ack_wait", "ackwait"}, {"max_ack_pending", "max_pending", "max_inflight"}, {"js_domain"},
		{"js_api_timeout", "api_timeout"}, {"stream_replicas"}, {"consumer_replicas"},
		{"consumer_memory_storage"}, {"consumer_inactive_threshold", "consumer_auto_cleanup"},
		{"reject_qos2_publish"}, {"downgrade_qos2_subscribe"},
	}
	f := p.fields("", m, known)
	mq := &MQTT{}
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, path := f[name], "."+name
		switch name {
		case "host":
			mq.Host = p.str(path, v)
		case "port":
			mq.Port = p.port(path, v)
		case "listen":
			mq.Host, mq.Port = p.listen(path, v)
		case "tls":
			mq.TLS = p.mqttTLS(path, v)
		case "authorization":
			mq.Authorization = p.wsAuthorization(path, v)
		case "no_auth_user":
			mq.NoAuthUser = p.str(path, v)
		case "reject_qos2_publish":
			mq.RejectQoS2Publish = p.boolean(path, v)
		case "downgrade_qos2_subscribe":
			mq.DowngradeQoS2Subscribe = p.boolean(path, v)
		case "ack_wait":
			mq.AckWait = p.duration(path, v)
		case "js_api_timeout":
			mq.JSAPITimeout = p.duration(path, v)
		case "consumer_inactive_threshold":
			mq.ConsumerInactiveThreshold = p.duration(path, v)
		case "max_ack_pending":
			mq.MaxAckPending = int(p.mqttCount(path, v, mqttMaxAckPending))
		case "stream_replicas", "consumer_replicas":
			if n := p.mqttCount(path, v, 5); n != 0 {
				p.refuse(path, mqttNotStored)
			}
		case "consumer_memory_storage":
			mq.ConsumerMemoryStorage = p.boolean(path, v)
		case "js_domain":
			if p.str(path, v) != "" {
				p.refuse(path, mqttNotStored)
			}
		}
	}
	if _, ok := f["port"]; !ok {
		if _, ok := f["listen"]; !ok {
			mq.Port = DefaultMQTTPort
		}
	}
	return mq
}

// mqttTLS reads the block's tls: the client port's keys, less the
// certificate mapping bus does not do for MQTT clients.
func (p *blockParser) mqttTLS(path string, raw any) *TLS {
	var sub blockParser
	t := sub.tls(raw)
	for _, e := range sub.errs {
		e.path = path + e.path
		p.errs = append(p.errs, e)
	}
	if t == nil {
		return nil
	}
	if t.VerifyAndMap {
		p.refuse(path+".verify_and_map", "bus does not map MQTT client certificates to users; "+removeIt)
	}
	if t.HandshakeFirst || t.HandshakeFirstFallback != 0 {
		p.refuse(path+".handshake_first", "an MQTT listener with TLS always starts with the handshake; "+removeIt)
	}
	return t
}

// mqttCount reads a whole number in 0..limit, in the reference's words
// when it is out of range.
func (p *blockParser) mqttCount(path string, raw any, limit int64) int64 {
	n, ok := number(raw)
	if !ok || n < 0 || n > limit {
		p.bad(path, "invalid value %s, should be in [0..%d] range", describe(raw), limit)
		return 0
	}
	return n
}

// refuse reports a key bus does not act on, with why.
func (p *blockParser) refuse(path, why string) {
	p.errs = append(p.errs, &nestedError{path: path, reason: why, err: ErrUnsupportedKey})
}

// mqttValue is the mqtt key.
type mqttValue struct{ p **MQTT }

func (v mqttValue) set(raw any) error {
	var bp blockParser
	mq := bp.mqtt(raw)
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = mq
	return nil
}

func (v mqttValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v mqttValue) kind() string { return "block" }
