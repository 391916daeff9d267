package conf

import (
	"strings"
	"testing"
)

func TestFeatureFlags(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "bus.conf", "feature_flags { js_ack_fc_v2: true }\n"), nil)
	if err != nil || !cfg.FeatureFlags.JSAckFormatV2 {
		t.Fatalf("js_ack_fc_v2: %+v, %v", cfg.FeatureFlags, err)
	}
	cfg, err = Load(writeConfig(t, "bus.yaml", "feature_flags:\n  js_ack_fc_v2: false\n"), nil)
	if err != nil || cfg.FeatureFlags.JSAckFormatV2 {
		t.Fatalf("off: %+v, %v", cfg.FeatureFlags, err)
	}
	for _, body := range []string{
		"feature_flags { js_api_reply_v2: true }\n",
		"feature_flags { js_ack_fc_v2: 3 }\n",
		"feature_flags: true\n",
	} {
		_, err := Load(writeConfig(t, "bus.conf", body), nil)
		if err == nil || !strings.Contains(err.Error(), "feature_flags") {
			t.Errorf("%q: %v, want a refusal naming feature_flags", body, err)
		}
	}
}
