package conf

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
)

// trusted_keys (and its alias trusted) turns operator mode on with the
// operators' public keys; a key that is no operator public key, an empty
// list, and trusted_keys beside operator are refused naming the key.
func TestTrustedKeys(t *testing.T) {
	t.Parallel()
	op, _ := nkeys.CreateOperator()
	opPub, _ := op.PublicKey()
	acc, _ := nkeys.CreateAccount()
	accPub, _ := acc.PublicKey()
	cfg, err := Load(writeConfig(t, "nats.conf", "trusted: "+opPub+"\nresolver: MEMORY\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.OperatorMode() || cfg.TrustedKeys == nil || !reflect.DeepEqual(cfg.TrustedKeys.Keys, []string{opPub}) || cfg.Operator != nil {
		t.Fatalf("operator %+v, trusted keys %v", cfg.Operator, cfg.TrustedKeys)
	}
	for _, tc := range []struct{ name, content, reason string }{
		{"account key", "trusted_keys: [" + accPub + "]\nresolver: MEMORY\n", "valid public operator nkey"},
		{"empty", "trusted_keys: []\nresolver: MEMORY\n", "trusts no one"},
		{"not a list", "trusted_keys: {a: b}\nresolver: MEMORY\n", "not an operator public key or a list"},
		{"beside operator", "trusted_keys: " + opPub + "\noperator: eyJhbGciOiJlZDI1NTE5LW5rZXkiLCJ0eXAiOiJKV1QifQ.e30.x\nresolver: MEMORY\n", "conflicting options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(writeConfig(t, "nats.conf", tc.content), nil)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, ke := range keyErrors(t, err) {
				if ke.Key == "trusted_keys" && strings.Contains(ke.Reason, tc.reason) {
					return
				}
			}
			t.Fatalf("%v, want trusted_keys: %q", err, tc.reason)
		})
	}
}
