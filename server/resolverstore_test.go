package server

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// accountJWT is an account JWT of a new account, signed by a new
// operator, and the account's key.
func accountJWT(t *testing.T) (key, token string) {
	t.Helper()
	op, _ := nkeys.CreateOperator()
	acc, _ := nkeys.CreateAccount()
	key, _ = acc.PublicKey()
	token, err := jwt.NewAccountClaims(key).Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	return key, token
}

// TestJWTStore checks the store's files and rules: <key>.jwt files read
// back on open, a full store's limit, deletes renamed or removed, a
// cache's least recently used JWT dropped at its limit and its JWTs
// dropped after their ttl. (A preload older than the stored JWT:
// tests/TestJWTResolverReloadKeepsPushes.)
func TestJWTStore(t *testing.T) {
	t.Parallel()
	t.Run("full keeps files and refuses past its limit", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		st, err := openJWTStore(&Resolver{Type: ResolverFull, Dir: dir, Limit: 2}, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		k1, j1 := accountJWT(t)
		k2, j2 := accountJWT(t)
		k3, j3 := accountJWT(t)
		for k, j := range map[string]string{k1: j1, k2: j2} {
			if _, err := st.save(k, j); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.save(k3, j3); !errors.Is(err, errStoreFull) {
			t.Fatalf("third save: %v, want %v", err, errStoreFull)
		}
		if data, err := os.ReadFile(filepath.Join(dir, k1+".jwt")); err != nil || string(data) != j1 {
			t.Fatalf("file of %s: %v", k1, err)
		}
		if err := st.remove(k1, false); err != nil {
			t.Fatal(err)
		}
		if err := st.remove(k2, true); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, k1+".jwt.deleted")); err != nil {
			t.Fatalf("soft delete: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, k2+".jwt.deleted")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("hard delete left %v", err)
		}
		if _, err := st.save(k3, j3); err != nil {
			t.Fatal(err)
		}
		again, err := openJWTStore(&Resolver{Type: ResolverFull, Dir: dir}, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		if keys := again.keys(); len(keys) != 1 || keys[0] != k3 {
			t.Fatalf("reopened: %v, want [%s]", keys, k3)
		}
	})
	t.Run("cache drops the least recently used and the expired", func(t *testing.T) {
		t.Parallel()
		now := time.Unix(1_000_000, 0)
		clock := func() time.Time { return now }
		st, err := openJWTStore(&Resolver{Type: ResolverCache, Dir: t.TempDir(), Limit: 2, TTL: time.Minute}, clock)
		if err != nil {
			t.Fatal(err)
		}
		k1, j1 := accountJWT(t)
		k2, j2 := accountJWT(t)
		k3, j3 := accountJWT(t)
		for k, j := range map[string]string{k1: j1, k2: j2} {
			if _, err := st.save(k, j); err != nil {
				t.Fatal(err)
			}
		}
		st.load(k1) // k2 is now the least recently used
		evicted, err := st.save(k3, j3)
		if err != nil || evicted != k2 {
			t.Fatalf("evicted %q (%v), want %s", evicted, err, k2)
		}
		now = now.Add(2 * time.Minute)
		if keys := st.keys(); len(keys) != 0 {
			t.Fatalf("after the ttl: %v", keys)
		}
	})
}
