package tests

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// trusted_keys names the trusted operators by their public keys, with no
// operator JWT (nats.go's own JWT tests run servers so): from one config
// file, bus and the reference let in the user of an account the key
// signed and refuse the user of an account a stranger signed.
func TestJWTTrustedKeysMatchReference(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	w.addAccount("X", nil)
	stranger, _ := nkeys.CreateOperator()
	var err error
	if w.accounts["X"].jwt, err = w.accounts["X"].claims.Encode(stranger); err != nil {
		t.Fatal(err)
	}
	credsA, _ := w.user("A", nil, nil)
	credsX, _ := w.user("X", nil, nil)
	opPub, _ := w.operator.PublicKey()
	p := startConfPair(t, fmt.Sprintf(`
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
trusted_keys: [%q]
resolver: MEM
resolver_preload: {
  %s: %s
  %s: %s
}
`, opPub, w.accounts["A"].pub, w.accounts["A"].jwt, w.accounts["X"].pub, w.accounts["X"].jwt))
	bothSides(t, "nats://"+p.busClient, "nats://"+p.refClient, func(t *testing.T, url string) []string {
		return []string{
			"A's user: " + connectErr(url, nats.UserCredentials(credsA)),
			"X's user: " + connectErr(url, nats.UserCredentials(credsX)),
			"no credentials: " + connectErr(url),
		}
	})
}
