package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The mqtt block loads with nats-server's keys, from a nats-server file
// and from YAML alike.
func TestLoadMQTTBlock(t *testing.T) {
	t.Parallel()
	want := &MQTT{
		Host: "0.0.0.0", Port: 8883, TLS: &TLS{CertFile: "c.pem", KeyFile: "k.pem"},
		Authorization: &WebSocketAuth{User: "dev", Password: "s3cr3t", Timeout: 1500 * time.Millisecond},
		NoAuthUser:    "guest", RejectQoS2Publish: true, DowngradeQoS2Subscribe: true,
		AckWait: 10 * time.Second, MaxAckPending: 100, JSAPITimeout: 2 * time.Second,
		ConsumerMemoryStorage: true, ConsumerInactiveThreshold: time.Hour,
	}
	for name, content := range map[string]string{
		"nats.conf": `
mqtt {
  listen: "0.0.0.0:8883"
  tls { cert_file: c.pem, key_file: k.pem }
  authorization { user: dev, password: s3cr3t, timeout: 1.5 }
  no_auth_user: guest
  reject_qos2_publish: true
  downgrade_qos2_subscribe: true
  ack_wait: "10s"
  max_ack_pending: 100
  js_api_timeout: "2s"
  consumer_memory_storage: true
  consumer_inactive_threshold: "1h"
  js_domain: ""
  stream_replicas: 0
}
`,
		"bus.yaml": `
mqtt:
  host: 0.0.0.0
  port: 8883
  tls: {cert_file: c.pem, key_file: k.pem}
  authentication: {username: dev, pass: s3cr3t, timeout: 1.5}
  no_auth_user: guest
  reject_qos2_publish: true
  downgrade_qos2_subscribe: true
  ackwait: 10s
  max_inflight: 100
  api_timeout: 2s
  consumer_memory_storage: true
  consumer_auto_cleanup: 1h
`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeConfig(t, name, content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.MQTT, want) {
				t.Errorf("got %+v\nwant %+v", cfg.MQTT, want)
			}
		})
	}
	cfg, err := Load(writeConfig(t, "nats.conf", "mqtt {}"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MQTT.Port != DefaultMQTTPort || cfg.MQTT.TLS != nil {
		t.Errorf("a block without port: %+v", cfg.MQTT)
	}
}

// Bad values are refused naming the key, in range first; the storage
// keys a single bus cannot act on (domain, replicas) are refused by name
// when set.
func TestMQTTBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string // inside mqtt { ... }
		wantKey    string
		wantErr    error
		wantMsg    string
	}{
		{"port_range", "port: 70000", "mqtt.port", ErrBadValue, "not a port"},
		{"listen_bad", `listen: "nowhere"`, "mqtt.listen", ErrBadValue, "host:port"},
		{"unknown", "rejct_qos2_publish: true", "mqtt.rejct_qos2_publish", ErrUnknownKey, `did you mean "reject_qos2_publish"?`},
		{"reject_not_bool", "reject_qos2_publish: maybe", "mqtt.reject_qos2_publish", ErrBadValue, ""},
		{"max_ack_pending_range", "max_ack_pending: 70000", "mqtt.max_ack_pending", ErrBadValue, "[0..65535]"},
		{"max_ack_pending_negative", "max_inflight: -1", "mqtt.max_ack_pending", ErrBadValue, "[0..65535]"},
		{"ack_wait_bad", "ack_wait: soon", "mqtt.ack_wait", ErrBadValue, "not a duration"},
		{"ack_wait_negative", `ack_wait: "-1s"`, "mqtt.ack_wait", ErrBadValue, "is negative"},
		{"js_domain", "js_domain: hub", "mqtt.js_domain", ErrUnsupportedKey, "no other JetStream domain"},
		{"stream_replicas", "stream_replicas: 3", "mqtt.stream_replicas", ErrUnsupportedKey, "no replicas"},
		{"consumer_replicas_range", "consumer_replicas: 9", "mqtt.consumer_replicas", ErrBadValue, "[0..5]"},
		{"api_timeout_negative", `api_timeout: "-5s"`, "mqtt.js_api_timeout", ErrBadValue, "is negative"},
		{"tls_map", "tls { cert_file: c, key_file: k, verify_and_map: true }", "mqtt.tls.verify_and_map", ErrUnsupportedKey, "map MQTT client certificates"},
		{"authorization_user_and_token", "authorization { user: a, token: t }", "mqtt.authorization", ErrBadValue, "user/pass and token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, "nats.conf", "mqtt {\n"+tc.body+"\n}\n"), nil)
			errs := keyErrors(t, err)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %v", len(errs), err)
			}
			ke := errs[0]
			if ke.Key != tc.wantKey || !errors.Is(ke, tc.wantErr) || !strings.Contains(ke.Error(), tc.wantMsg) {
				t.Errorf("got %q (key %q), want key %q, %v, containing %q", ke.Error(), ke.Key, tc.wantKey, tc.wantErr, tc.wantMsg)
			}
		})
	}
}
