package conf

import (
	"encoding/json"
	"testing"
)

// FuzzResolverBlock parses any JSON value as the resolver key: MEMORY, a
// URL, or the NATS resolver block. Oracle: no panic, and either a value
// or an error, never both or neither.
func FuzzResolverBlock(f *testing.F) {
	f.Add(`"MEMORY"`)
	f.Add(`"URL(http://localhost:9090/jwt/v1/accounts/)"`)
	f.Add(`{"type":"full","dir":"./jwt","allow_delete":true,"hard_delete":true,"interval":"2m","limit":1000,"timeout":"1.9s"}`)
	f.Add(`{"type":"cache","dir":"/var/jwt","limit":10,"ttl":"1h"}`)
	f.Add(`{"type":"cache","dir":"","allow_delete":"yes","limit":-3,"ttl":5}`)
	f.Add(`{"TYPE":"Full","Dir":"x","colour":"red","interval":null}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		var r *Resolver
		if err := (resolverValue{&r}).set(v); (err == nil) == (r == nil) {
			t.Fatalf("resolver: value %+v and error %v", r, err)
		}
	})
}
