package conf

import (
	"strings"
	"testing"
)

// The reference's encryption keys, in both file forms, with the key from
// the environment ($NAME) and every alias.
func TestJetStreamEncryptionKeys(t *testing.T) {
	t.Setenv("TESTJS_KEY", "from-env-secret")
	t.Setenv("TESTJS_OLD", "old-env-secret")
	for _, tc := range []struct {
		name, file, text string
		want             JetStream
	}{
		{"conf_env", "nats.conf", "jetstream { cipher: aes, key: $TESTJS_KEY, prev_encryption_key: $TESTJS_OLD }",
			JetStream{Cipher: "aes", Key: "from-env-secret", PrevKey: "old-env-secret"}},
		{"conf_aliases", "nats.conf", "jetstream { cipher: ChaCha, ek: s1, prev_ek: s0 }",
			JetStream{Cipher: "chachapoly", Key: "s1", PrevKey: "s0"}},
		{"conf_key_only", "nats.conf", "jetstream { encryption_key: s1 }",
			JetStream{Key: "s1"}},
		{"yaml_env", "bus.yaml", "jetstream:\n  cipher: chachapoly\n  key: $TESTJS_KEY\n  prev_key: literal\n",
			JetStream{Cipher: "chachapoly", Key: "from-env-secret", PrevKey: "literal"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(writeConfig(t, tc.file, tc.text), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.JetStream
			if got.Cipher != tc.want.Cipher || got.Key != tc.want.Key || got.PrevKey != tc.want.PrevKey || !got.Enabled {
				t.Fatalf("jetstream = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Settings that would not encrypt what they say are refused naming the
// key, and no error repeats a secret.
func TestJetStreamEncryptionRefusals(t *testing.T) {
	t.Setenv("TESTJS_EMPTY", "")
	for _, tc := range []struct{ text, want string }{
		{"jetstream:\n  cipher: rot13\n  key: sekrit-1\n", "unknown cipher"},
		{"jetstream:\n  cipher: aes\n", "set without key"},
		{"jetstream:\n  prev_encryption_key: sekrit-1\n", "set without key"},
		{"jetstream:\n  key: sekrit-1\n  prev_key: sekrit-1\n", "equals key"},
		{"jetstream:\n  key: $TESTJS_UNSET_VAR\n", "TESTJS_UNSET_VAR is not set"},
		{"jetstream:\n  key: $TESTJS_EMPTY\n", "is not set"},
		{"jetstream:\n  key: \"\"\n", "empty key"},
		{"jetstream:\n  key: 7\n", "not a string"},
	} {
		_, err := Load(writeConfig(t, "bus.yaml", tc.text), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "jetstream") {
			t.Errorf("%q: error %v, want one naming jetstream and saying %q", tc.text, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%q: error %q repeats the key", tc.text, err)
		}
	}
}
