package subjects

import (
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"ORDERS": true, "kv_ORDERS-1": true, "ünï": true, "a\x00": true, strings.Repeat("x", MaxNameLen): true,
		"": false, "a.b": false, "*": false, ">": false, "a b": false, "a\tb": false, "a\rb": false,
		"a\nb": false, "a\fb": false, "a/b": false, `a\b`: false, strings.Repeat("x", MaxNameLen+1): false,
	} {
		if ValidName(name) != ok {
			t.Errorf("ValidName(%q) = %v, want %v", name, !ok, ok)
		}
	}
}
