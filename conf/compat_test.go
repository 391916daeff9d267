package conf

import (
	"reflect"
	"testing"
	"time"
)

// Keys that nats-server accepts for clusters and lame-duck mode load
// rather than fail as unknown, so that its configs carry over (issue 9).
func TestNatsServerClusterKeysAreAccepted(t *testing.T) {
	t.Parallel()
	got, err := Load(writeConfig(t, "bus.yaml", `
no_advertise: true
connect_error_reports: 10
reconnect_error_reports: 5
lame_duck_duration: 30s
lame_duck_grace_period: 5s
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.NoAdvertise = true
	want.ConnectErrorReports, want.ReconnectErrorReports = 10, 5
	want.LameDuckDuration, want.LameDuckGracePeriod = 30*time.Second, 5*time.Second
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestLoadTLSBlock(t *testing.T) {
	t.Parallel()
	got, err := Load(writeConfig(t, "bus.yaml", `
https_port: 8443
tls:
  cert_file: s.pem
  key_file: k.pem
  ca_file: ca.pem
  verify_and_map: true
  timeout: 0.5
  handshake_first: true
  min_version: 1.3
  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: X25519
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &TLS{CertFile: "s.pem", KeyFile: "k.pem", CAFile: "ca.pem", VerifyAndMap: true, Timeout: 500 * time.Millisecond,
		HandshakeFirst: true, MinVersion: "1.3", CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, CurvePreferences: []string{"X25519"}}
	if got.HTTPSPort != 8443 || !reflect.DeepEqual(got.TLS, want) {
		t.Errorf("got %d %+v\nwant %+v", got.HTTPSPort, got.TLS, want)
	}
	_, err = Load(writeConfig(t, "bus.yaml", "tls:\n  cert: x\n  verify: maybe\n"), nil)
	keys := map[string]bool{}
	for _, ke := range keyErrors(t, err) {
		keys[ke.Key] = true
	}
	if !keys["tls.cert"] || !keys["tls.verify"] || len(keys) != 2 {
		t.Errorf("errors %v, want tls.cert and tls.verify", err)
	}
}

func TestTLSHandshakeFirstValues(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]any{
		"true": {true, time.Duration(0)}, "false": {false, time.Duration(0)}, `"auto"`: {true, 50 * time.Millisecond},
		`"300ms"`: {true, 300 * time.Millisecond}, `"on"`: {true, time.Duration(0)},
	} {
		got, err := Load(writeConfig(t, "bus.yaml", "tls:\n  cert_file: c\n  key_file: k\n  handshake_first: "+in+"\n"), nil)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got.TLS.HandshakeFirst != want[0] || got.TLS.HandshakeFirstFallback != want[1] {
			t.Errorf("handshake_first: %s gave %v %v, want %v", in, got.TLS.HandshakeFirst, got.TLS.HandshakeFirstFallback, want)
		}
	}
	if _, err := Load(writeConfig(t, "bus.yaml", "tls:\n  handshake_first: sometimes\n"), nil); err == nil {
		t.Error("handshake_first: sometimes accepted")
	}
}
