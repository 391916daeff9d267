package server

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// MQTTOptions is the mqtt block: a listener for MQTT 3.1.1 clients,
// whose topics are the server's subjects under server/mqtt's mapping,
// with the same users, permissions and accounts as the client port
// (mqtt.go).
type MQTTOptions struct {
	// Port is the listener's port: 0 leaves MQTT off, -1 picks a free
	// port (see Server.MQTTAddr).
	Port int
	Host string
	// TLS is the listener's certificate; MQTT clients then start with
	// the TLS handshake (mqtts://, port 8883 by custom).
	TLS TLSOptions
	// Authorization and NoAuthUser override the top-level ones for MQTT
	// clients, as the websocket block's do for WebSocket clients
	// (wsauth.go): an MQTT user name and password are a user's, and the
	// password is also tried as a token (the reference's rule).
	Authorization WebSocketAuth
	NoAuthUser    string
	// RejectQoS2Publish closes the connection of a client that publishes
	// at QoS 2 and refuses a QoS 2 will with CONNACK 0x10, as the
	// reference does.
	RejectQoS2Publish bool
	// DowngradeQoS2Subscribe grants a QoS 2 subscription at most QoS 1.
	// bus grants QoS 2 subscriptions QoS 1 whatever its value, as it does
	// not deliver at QoS 2 (docs/mqtt.md).
	DowngradeQoS2Subscribe bool
	// AckWait is how long a QoS 1 delivery waits for its PUBACK before
	// JetStream sends it again, with DUP set; 0 is the reference's 30 s.
	AckWait time.Duration
	// MaxAckPending bounds a QoS 1 subscription's unacknowledged
	// deliveries (its consumer's max_ack_pending) and a session's,
	// 0..65535; 0 is the reference's 1024.
	MaxAckPending int
	// JSAPITimeout bounds each JetStream request the listener makes (a
	// store, a consumer, a session record); 0 is the reference's 5 s.
	JSAPITimeout time.Duration
	// ConsumerMemoryStorage keeps the consumers of QoS 1 subscriptions
	// in memory, and ConsumerInactiveThreshold (0: never) removes one
	// whose session has been gone that long.
	ConsumerMemoryStorage     bool
	ConsumerInactiveThreshold time.Duration
}

// The reference's defaults for the storage keys.
const (
	mqttDefaultAckWait       = 30 * time.Second
	mqttDefaultMaxAckPending = 1024
	mqttDefaultJSAPITimeout  = 5 * time.Second
	// mqttMaxAckTotal bounds the sum of a session's subscriptions'
	// max_ack_pending: the packet identifiers it has.
	mqttMaxAckTotal = 0xFFFF
)

func (m MQTTOptions) ackWait() time.Duration { return cmp.Or(m.AckWait, mqttDefaultAckWait) }
func (m MQTTOptions) maxAckPending() int     { return cmp.Or(m.MaxAckPending, mqttDefaultMaxAckPending) }
func (m MQTTOptions) jsAPITimeout() time.Duration {
	return cmp.Or(m.JSAPITimeout, mqttDefaultJSAPITimeout)
}

// enabled says the listener is configured.
func (m MQTTOptions) enabled() bool { return m.Port != 0 }

// validate reports the first setting that cannot work.
func (m MQTTOptions) validate() error {
	if !m.enabled() {
		return nil
	}
	switch {
	case m.Port < -1 || m.Port > 65535:
		return fmt.Errorf("server: mqtt port %d out of range -1..65535", m.Port)
	case m.AckWait < 0:
		return errors.New("server: mqtt ack_wait must be a positive value")
	case m.JSAPITimeout < 0:
		return errors.New("server: mqtt js_api_timeout must be a positive value")
	case m.ConsumerInactiveThreshold < 0:
		return errors.New("server: mqtt consumer_inactive_threshold must not be negative")
	case m.MaxAckPending < 0 || m.MaxAckPending > mqttMaxAckTotal:
		return fmt.Errorf("server: mqtt max_ack_pending %d out of range 0..%d", m.MaxAckPending, mqttMaxAckTotal)
	case m.TLS.VerifyAndMap:
		return errors.New("server: mqtt tls verify_and_map is not supported")
	case m.TLS.HandshakeFirst || m.TLS.HandshakeFirstFallback != 0:
		return errors.New("server: mqtt tls handshake_first does not apply: MQTT over TLS always starts with the handshake")
	}
	if m.TLS.enabled() {
		return m.TLS.validate()
	}
	return nil
}

// validateMQTTAuth checks the block's authorization against the
// top-level one, as validateWebSocketAuth does the websocket block's.
func (o Options) validateMQTTAuth() error {
	m, a := o.MQTT, o.Authorization
	if !m.enabled() {
		return nil
	}
	switch {
	case m.Authorization.Timeout < 0:
		return errors.New("server: mqtt authorization timeout must not be negative")
	case m.Authorization.User != "" && len(a.Users) > 0:
		return errors.New("server: mqtt authentication username not compatible with presence of users/nkeys")
	case m.Authorization.Token != "" && len(a.Users) > 0:
		return errors.New("server: mqtt authentication token not compatible with presence of users/nkeys")
	case m.Authorization.Token != "" && (m.Authorization.User != "" || m.Authorization.Password != ""):
		return errors.New("server: mqtt authorization: cannot have a user/pass and token")
	case m.Authorization.Password != "" && m.Authorization.User == "":
		return errors.New("server: mqtt authorization: password without a user")
	}
	if m.NoAuthUser != "" {
		for _, u := range a.Users {
			if u.label() == m.NoAuthUser {
				return nil
			}
		}
		return fmt.Errorf("server: mqtt no_auth_user %q is not one of the users", m.NoAuthUser)
	}
	return nil
}

// mqttAuthorization is the authorization MQTT clients meet.
func (o Options) mqttAuthorization() Authorization {
	m, a := o.MQTT, o.Authorization
	if m.Authorization.set() {
		a.User, a.Password, a.Token = m.Authorization.User, m.Authorization.Password, m.Authorization.Token
		a.NoAuthUser = m.NoAuthUser // the top-level one is not the block's
	} else if m.NoAuthUser != "" {
		a.NoAuthUser = m.NoAuthUser
	}
	if m.Authorization.Timeout > 0 {
		a.Timeout = m.Authorization.Timeout
	}
	return a
}

// newMQTTAuthenticator compiles who MQTT clients may connect as; nil
// without an mqtt listener.
func (s *Server) newMQTTAuthenticator(o *Options, set accountSet) *authenticator {
	if !o.MQTT.enabled() {
		return nil
	}
	return s.newAuthenticatorFor(o, o.mqttAuthorization(), false, set)
}

// mqttAuthTimeout bounds an MQTT client's CONNECT.
func (o *Options) mqttAuthTimeout() time.Duration { return o.mqttAuthorization().Timeout }
