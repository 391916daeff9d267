package conf

import (
	"strings"
	"testing"
	"time"
)

// The limits block in JSON and in YAML: every key,
// the batch block, and the keys' case ignored as nats-server ignores it.
func TestJetStreamLimitsBlock(t *testing.T) {
	t.Parallel()
	want := JetStreamLimits{
		MaxAckPending: 500, MaxRequestBatch: 20, DuplicateWindow: time.Minute,
		DefaultMaxConsumers: -1, MaxHAAssets: 3,
		Batch: JetStreamBatchLimits{MaxInflightPerStream: 4, MaxInflightTotal: 40, MaxMsgs: 100, Timeout: 5 * time.Second, MaxStagedBytes: 64 << 20},
	}
	for name, text := range map[string]string{
		"bus.json": `{"jetstream": {"store_dir": "/tmp/js", "limits": {
  "max_ack_pending": 500, "MAX_REQUEST_BATCH": 20, "duplicate_window": "1m",
  "default_max_consumers": -1, "max_ha_assets": 3,
  "batch": {"max_inflight_per_stream": 4, "max_inflight_total": 40, "max_msgs": 100, "timeout": "5s", "max_staged_bytes": "64MB"}}}}
`,
		"bus.yaml": `jetstream:
  limits:
    max_ack_pending: 500
    max_request_batch: 20
    duplicate_window: 1m
    default_max_consumers: -1
    max_ha_assets: 3
    batch: {max_inflight_per_stream: 4, max_inflight_total: 40, max_msgs: 100, timeout: 5s, max_staged_bytes: 64MB}
`,
	} {
		cfg, err := Load(writeConfig(t, name, text), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !cfg.JetStream.Enabled || cfg.JetStream.Limits != want {
			t.Errorf("%s: jetstream %+v, want limits %+v", name, cfg.JetStream, want)
		}
	}
}

// A bad key or value inside the limits block is an error naming the
// jetstream key, the limits block and the key inside it, with the value.
func TestJetStreamLimitsRefusesBadKeysAndValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"limits:\n    max_acks: 5\n", "limits: max_acks: unknown key"},
		{"limits:\n    max_ack_pending: -1\n", "max_ack_pending: -1 is negative"},
		{"limits:\n    max_ack_pending: lots\n", `max_ack_pending: "lots" is not a whole number`},
		{"limits:\n    max_request_batch: 5000000000\n", "max_request_batch: 5000000000 is not a whole number"},
		{"limits:\n    default_max_consumers: -2\n", "default_max_consumers: -2 is less than -1"},
		{"limits:\n    duplicate_window: soon\n", `duplicate_window: "soon" is not a duration`},
		{"limits:\n    duplicate_window: 10ms\n", "duplicate_window: 10ms is less than 100ms"},
		{"limits:\n    batch:\n      max_msgs: -3\n", "batch: max_msgs: -3 is negative"},
		{"limits:\n    batch:\n      size: 3\n", "batch: size: unknown key"},
		{"limits:\n    batch:\n      max_staged_bytes: -1\n", "batch: max_staged_bytes: -1 is negative"},
		{"limits:\n    batch:\n      max_staged_bytes: lots\n", `batch: max_staged_bytes: "lots" is not a size`},
		{"limits:\n    batch: 3\n", "batch: 3 is not a block"},
		{"limits: 5\n", "limits: 5 is not a block"},
	} {
		_, err := Load(writeConfig(t, "bus.yaml", "jetstream:\n  "+tc.text), nil)
		if err == nil || !strings.Contains(err.Error(), "jetstream") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming jetstream and %q", tc.text, err, tc.want)
		}
	}
}

// Two bad keys are both named, and a refused block changes nothing.
func TestJetStreamLimitsNamesEveryBadKey(t *testing.T) {
	t.Parallel()
	limits := JetStreamLimits{MaxAckPending: 7}
	err := jetstreamLimits(&limits, map[string]any{"max_ack_pending": 9, "nope": 1, "max_ha_assets": "x"})
	if err == nil || !strings.Contains(err.Error(), "nope: unknown key") || !strings.Contains(err.Error(), "max_ha_assets:") {
		t.Fatalf("error %v, want both keys named", err)
	}
	if limits.MaxAckPending != 7 {
		t.Errorf("max_ack_pending %d after a refused block, want 7 kept", limits.MaxAckPending)
	}
}
