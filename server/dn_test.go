package server

import "testing"

func TestParseDNAndSameDN(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"CN=alice,O=acme", "O=acme,CN=alice", true},
		{"CN=alice, O=acme", "cn=alice,o=acme", true},
		{`CN=a\,b,O=acme`, `O=acme,CN=a\,b`, true},
		{"CN=alice,O=acme", "CN=alice", false},
		{"CN=alice,O=acme", "CN=alice,O=other", false},
		{"CN=alice+OU=x,O=acme", "O=acme,OU=x,CN=alice", true},
	} {
		a, okA := parseDN(tc.a)
		b, okB := parseDN(tc.b)
		if !okA || !okB || sameDN(a, b) != tc.same {
			t.Errorf("%q vs %q: parsed %v %v, same %v, want %v", tc.a, tc.b, okA, okB, sameDN(a, b), tc.same)
		}
	}
	for _, bad := range []string{"alice", "=x", "CN=a,,O=b"} {
		if _, ok := parseDN(bad); ok {
			t.Errorf("parseDN(%q) accepted", bad)
		}
	}
}
