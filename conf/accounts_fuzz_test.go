package conf

import (
	"encoding/json"
	"testing"
)

// FuzzAccountsBlock parses any JSON value as the accounts block: users,
// limits, jetstream, mappings, exports and imports. Oracle: no panic,
// and either a value or problems, never both or neither.
func FuzzAccountsBlock(f *testing.F) {
	f.Add(`{"A":{"users":[{"user":"a","password":"b"}],"limits":{"max_conn":2,"max_payload":"1KB"},"jetstream":{"max_mem":"1MB","max_streams":-1}}}`)
	f.Add(`{"A":{"jetstream":"enabled","mappings":{"x":"y"},"default_permissions":{"publish":["a.>"]}}}`)
	f.Add(`{"A":{"exports":[{"stream":"e.>"},{"service":"s","accounts":["B"],"response_type":"chunked","response_threshold":"3s"}]},` +
		`"B":{"imports":[{"stream":{"account":"A","subject":"e.>"},"prefix":"p"},{"service":{"account":"A","subject":"s"},"to":"t"}]}}`)
	f.Add(`{"A":{"imports":[{"stream":{"account":"A"},"prefix":"p","to":"q"}, 3, null],"exports":{}}}`)
	f.Add(`{"$G":{"limits":{"max_subs":0}},"B":{"jetstream":{"cluster_traffic":"owner","max_file":0}}}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		var a *Accounts
		if err := (accountsValue{&a}).set(v); (err == nil) == (a == nil) {
			t.Fatalf("accounts: value %v and error %v", a, err)
		}
	})
}
