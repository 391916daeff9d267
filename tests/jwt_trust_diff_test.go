package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// TestJWTUntrustedAccountsSkippedAtStart starts bus and the reference
// with a resolver_preload account signed by a stranger operator and a
// full resolver directory holding a file that is no JWT: both start, as
// the reference does, the good account's user connects and the
// stranger's account's user is refused.
func TestJWTUntrustedAccountsSkippedAtStart(t *testing.T) {
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
	garbageKey, _ := nkeys.CreateAccount()
	garbagePub, _ := garbageKey.PublicKey()
	dirWithGarbage := func() string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, garbagePub+".jwt"), []byte("not a JWT"), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	bus := startBus(t, w.resolverOptions(dirWithGarbage(), "SYS", "A", "X"))
	ref, _ := startReferenceFile(t, w.resolverConfig(dirWithGarbage(), "SYS", "A", "X"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		return []string{"A's user: " + connectErr(url, nats.UserCredentials(credsA)), "X's user: " + connectErr(url, nats.UserCredentials(credsX))}
	})
}

// TestJWTStrictSigningKeyUsage runs an operator with
// strict_signing_key_usage on bus and the reference alike: a push of an
// account JWT its identity key signed is refused with the reference's
// error and not stored, one its signing key signed is taken, and that
// account's users must be signed by an account signing key.
func TestJWTStrictSigningKeyUsage(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	signing, _ := nkeys.CreateOperator()
	signingPub, _ := signing.PublicKey()
	oc := jwt.NewOperatorClaims(w.opJWTSubject())
	oc.Name, oc.SystemAccount, oc.StrictSigningKeyUsage = "op", w.sysKey, true
	oc.SigningKeys.Add(signingPub)
	var err error
	if w.opJWT, err = oc.Encode(w.operator); err != nil {
		t.Fatal(err)
	}
	// Under strict usage the system account's users too are signed by
	// one of its signing keys.
	sys := w.accounts["SYS"]
	sysSigning, _ := nkeys.CreateAccount()
	sysSigningPub, _ := sysSigning.PublicKey()
	sys.claims.SigningKeys.Add(sysSigningPub)
	if sys.jwt, err = sys.claims.Encode(signing); err != nil {
		t.Fatal(err)
	}
	a := w.addAccount("A", nil) // signed by the operator's own key
	byIdentity := a.jwt
	accSigning, _ := nkeys.CreateAccount()
	accSigningPub, _ := accSigning.PublicKey()
	a.claims.SigningKeys.Add(accSigningPub)
	bySigningKey, err := a.claims.Encode(signing)
	if err != nil {
		t.Fatal(err)
	}
	sysCreds, _ := w.user("SYS", sysSigning, nil)
	userByAccount, _ := w.user("A", nil, nil)
	userBySigningKey, _ := w.user("A", accSigning, nil)
	bus := startBus(t, w.resolverOptions(t.TempDir(), "SYS"))
	ref, _ := startReferenceFile(t, w.resolverConfig(t.TempDir(), "SYS"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		nc := connect(t, url, nats.UserCredentials(sysCreds))
		steps := []string{
			"push signed by the operator's key: " + claimsAnswer(t, nc, "$SYS.REQ.CLAIMS.UPDATE", []byte(byIdentity)),
			"lookup: " + claimsAnswer(t, nc, "$SYS.REQ.ACCOUNT."+a.pub+".CLAIMS.LOOKUP", nil),
			"push signed by its signing key: " + claimsAnswer(t, nc, "$SYS.REQ.CLAIMS.UPDATE", []byte(bySigningKey)),
			"user signed by the account: " + connectErr(url, nats.UserCredentials(userByAccount)),
			"user signed by an account signing key: " + connectErr(url, nats.UserCredentials(userBySigningKey)),
		}
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}
