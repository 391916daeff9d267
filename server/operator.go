package server

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Operator turns on operator (JWT) mode, nats-server's decentralized
// authentication: the operator's JWT is trusted, accounts are JWTs
// signed by it, and users connect with JWTs signed by their account
// (jwtauth.go). Each account JWT becomes an account of its own, named by
// its public key, with the limits, exports and imports its claims give
// (jwtaccounts.go).
type Operator struct {
	// JWTs are the trusted operators' JWTs, each as its file holds it
	// (bare or between the nsc decoration lines).
	JWTs []string
	// TrustedKeys are trusted operators' public keys, in place of their
	// JWTs (nats-server's trusted_keys): account JWTs one of them signed
	// are trusted. Not beside JWTs.
	TrustedKeys []string
	// SystemAccount is the public key of the system account; "" for
	// none. Its JWT must be among Accounts.
	SystemAccount string
	// Accounts are the account JWTs of the MEMORY resolver, by the
	// account's public key (nats-server's resolver_preload); with
	// Resolver, the JWTs to store in it first.
	Accounts map[string]string
	// Resolver is a NATS resolver (full or cache) keeping account JWTs
	// in a directory and taking new ones at run time; nil for MEMORY.
	Resolver *Resolver
}

// trust is a compiled Operator: who may sign accounts, and the accounts'
// claims. Immutable; a reload compiles a new one.
type trust struct {
	// signers are the operators' identity and signing keys; an
	// operator with strict_signing_key_usage trusts only its signing keys.
	signers map[string]bool
	// strictOperators are those operators' identity keys, and
	// strictSigners their signing keys: an account such a key signed
	// signs its users with its signing keys only, as in the reference.
	strictOperators, strictSigners map[string]bool
	// skipped are the account JWTs not taken, by key, with why: as the
	// reference, the server starts without them (withOperator warns).
	skipped map[string]error
	// accounts are the verified account claims by public key.
	accounts map[string]*jwt.AccountClaims
	system   string
	// grants are the imports of accounts checked (activation.go).
	grants *importGrants
}

// compileOperator decodes and verifies o's JWTs. Its errors name the key
// of the config file (operator, resolver_preload) and the JWT's key.
func compileOperator(o *Operator) (*trust, error) {
	switch {
	case len(o.JWTs) == 0 && len(o.TrustedKeys) == 0:
		return nil, fmt.Errorf("server: operator: no operator JWT")
	case len(o.JWTs) > 0 && len(o.TrustedKeys) > 0:
		return nil, fmt.Errorf("server: trusted_keys: conflicting options for 'TrustedKeys' and 'TrustedOperators'")
	}
	t := &trust{signers: map[string]bool{}, strictOperators: map[string]bool{}, strictSigners: map[string]bool{},
		accounts: map[string]*jwt.AccountClaims{}, skipped: map[string]error{}, system: o.SystemAccount}
	for _, k := range o.TrustedKeys {
		if !nkeys.IsValidPublicOperatorKey(k) {
			return nil, fmt.Errorf("server: trusted_keys: trust key %q required to be a valid public operator nkey", k)
		}
		t.signers[k] = true
	}
	for i, raw := range o.JWTs {
		oc, err := decodeOperator(raw)
		if err != nil {
			return nil, fmt.Errorf("server: operator[%d]: %w", i, err)
		}
		if oc.StrictSigningKeyUsage {
			t.strictOperators[oc.Subject] = true
		} else {
			t.signers[oc.Subject] = true
		}
		for _, k := range oc.SigningKeys {
			t.signers[k] = true
			t.strictSigners[k] = oc.StrictSigningKeyUsage
		}
		if o.SystemAccount == "" && oc.SystemAccount != "" {
			t.system = oc.SystemAccount
		}
	}
	if t.system != "" && !nkeys.IsValidPublicAccountKey(t.system) {
		return nil, fmt.Errorf("server: system_account: %q is not an account public key", t.system)
	}
	for _, key := range sortedKeys(o.Accounts) {
		ac, err := t.decodeAccount(key, o.Accounts[key])
		switch {
		case err != nil && key == t.system:
			// The reference does not start with a system account it
			// cannot trust either.
			return nil, fmt.Errorf("server: resolver_preload %s: %w", key, err)
		case err != nil:
			t.skipped[key] = err
		default:
			t.accounts[key] = ac
		}
	}
	if t.system != "" && t.accounts[t.system] == nil {
		return nil, fmt.Errorf("server: system_account: %s has no account JWT in resolver_preload", t.system)
	}
	return t, nil
}

// checkPreload refuses a resolver_preload entry that is no account JWT
// at all, as the reference refuses to start on one ("preload account
// error"); one it can decode but not trust is skipped later, with a
// warning (compileOperator).
func (o *Operator) checkPreload() error {
	if o == nil {
		return nil
	}
	for _, key := range sortedKeys(o.Accounts) {
		if _, err := jwt.DecodeAccountClaims(strings.TrimSpace(o.Accounts[key])); err != nil {
			return fmt.Errorf("server: resolver_preload %s: preload account error: %w", key, err)
		}
	}
	return nil
}

// decodeOperator decodes one operator JWT and checks that the operator
// signed it with its own key or one of its signing keys.
func decodeOperator(raw string) (*jwt.OperatorClaims, error) {
	token, err := jwt.ParseDecoratedJWT([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("not a JWT: %w", err)
	}
	oc, err := jwt.DecodeOperatorClaims(token)
	if err != nil {
		return nil, fmt.Errorf("not an operator JWT: %w", err)
	}
	if oc.Issuer != oc.Subject && !slices.Contains(oc.SigningKeys, oc.Issuer) {
		return nil, fmt.Errorf("operator %s: signed by %s, neither the operator nor one of its signing keys", oc.Subject, oc.Issuer)
	}
	if err := claimsProblem(oc); err != "" {
		return nil, fmt.Errorf("operator %s: %s", oc.Subject, err)
	}
	return oc, nil
}

// decodeAccount decodes an account JWT listed under key and checks that
// it is key's and that a trusted operator signed it.
func (t *trust) decodeAccount(key, raw string) (*jwt.AccountClaims, error) {
	ac, err := jwt.DecodeAccountClaims(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("not an account JWT: %w", err)
	}
	switch {
	case ac.Subject != key:
		return nil, fmt.Errorf("the JWT is account %s's", ac.Subject)
	case t.strictOperators[ac.Issuer]:
		return nil, fmt.Errorf("operator requires issuer to be a signing key")
	case !t.signers[ac.Issuer]:
		return nil, fmt.Errorf("signed by %s, neither a trusted operator nor one of its signing keys", ac.Issuer)
	}
	if err := claimsProblem(ac); err != "" {
		return nil, fmt.Errorf("%s", err)
	}
	if _, r1 := ac.Limits.JetStreamTieredLimits["R1"]; len(ac.Limits.JetStreamTieredLimits) > 0 && !r1 && ac.Limits.JetStreamLimits == (jwt.JetStreamLimits{}) {
		// Only an R1 tier bounds anything on one server; without it the
		// account would have JetStream that no stream could use.
		return nil, fmt.Errorf("limits.tiered_limits: bus is one server and serves the R1 tier only; give the account an R1 tier or plain jetstream limits")
	}
	if js := jetStreamClaims(ac); (js.MemoryStorage == 0) != (js.DiskStorage == 0) {
		// 0 turns that storage kind off in the reference; bus cannot
		// (an account's JetStream limit of 0 is no limit), so refuse
		// rather than allow more.
		return nil, fmt.Errorf("limits.mem_storage and disk_storage: bus cannot turn one storage kind off (0) while the other is on; give both a limit or -1")
	}
	if ac.Limits.LeafNodeConn > 0 {
		return nil, fmt.Errorf("limits.leaf: bus accepts no leaf node connections; set it to 0 or -1")
	}
	return ac, nil
}

// claimsProblem is the first blocking problem jwt's validation finds
// in c (a malformed key, expiry), or "".
func claimsProblem(c jwt.Claims) string {
	var vr jwt.ValidationResults
	c.Validate(&vr)
	for _, e := range vr.Errors() {
		return e.Error()
	}
	return ""
}

// sortedKeys lists m's keys sorted, so errors come in a stable order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sameOperators reports whether a reload keeps operator mode as it was:
// on or off, with the same operators. The account JWTs may change.
func sameOperators(old, new *Operator) bool {
	if old == nil || new == nil {
		return old == new
	}
	return slices.Equal(old.JWTs, new.JWTs) && slices.Equal(old.TrustedKeys, new.TrustedKeys) && reflect.DeepEqual(old.Resolver, new.Resolver)
}
