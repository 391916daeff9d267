package conf

import (
	"encoding/json"
	"testing"
)

// FuzzAuthorizationBlock parses any JSON value as the authorization and
// tls blocks. Oracle: no panic, and either a value or problems, never
// both or neither.
func FuzzAuthorizationBlock(f *testing.F) {
	f.Add(`{"users":[{"user":"a","password":"b","permissions":{"publish":["x"],"subscribe":{"allow":"y","deny":["z q"]},"allow_responses":{"max":2,"expires":"1m"}}}],"timeout":1.5}`)
	f.Add(`{"token":"t","default_permissions":{"pub":"a","sub":[]}}`)
	f.Add(`{"users":[{"nkey":"UABC","permissions":{"allow_responses":true}}, 7, null]}`)
	f.Add(`{"cert_file":"c","key_file":"k","min_version":1.3,"cipher_suites":["x"],"timeout":"2s"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		var a *Authorization
		if err := (authValue{&a}).set(v); (err == nil) == (a == nil) {
			t.Fatalf("authorization: value %v and error %v", a, err)
		}
		var tl *TLS
		if err := (tlsValue{&tl}).set(v); (err == nil) == (tl == nil) {
			t.Fatalf("tls: value %v and error %v", tl, err)
		}
	})
}
