package conf

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// Operator mode (nats-server's decentralized, JWT authentication): the
// operator key names the trusted operators' JWTs, resolver says where
// account JWTs come from (MEMORY, or the full and cache NATS resolvers of
// resolver.go), and resolver_preload holds account JWTs to start with. The
// server verifies the JWTs (server/operator.go); conf only reads them.

// ResolverMemory is the resolver that holds the account JWTs of
// resolver_preload, nats-server's MEMORY resolver.
const ResolverMemory = "MEMORY"

// Operators is the operator key: the trusted operators' JWTs.
type Operators struct{ JWTs []string }

// Preload is resolver_preload: account JWTs by account public key.
type Preload struct{ Accounts map[string]string }

// operatorValue binds the operator key: a JWT, the path of a file holding
// one, or a list of them. Files are read here, so Config holds the JWTs.
type operatorValue struct{ p **Operators }

func (v operatorValue) set(raw any) error {
	var list []any
	switch r := raw.(type) {
	case string:
		list = []any{r}
	case []any:
		list = r
	default:
		return fmt.Errorf("%s is not a JWT, a path or a list of them", describe(raw))
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return fmt.Errorf("entry %d: %s is not a JWT or a path", i, describe(e))
		}
		token, err := readOperatorJWT(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, token)
	}
	*v.p = &Operators{JWTs: out}
	return nil
}

// maxOperatorFile bounds an operator JWT file; nsc's are a few KB.
const maxOperatorFile = 1 << 20

// readOperatorJWT is s when s is a JWT (its header, base64 JSON, starts
// "eyJ"), else the content of the file s names.
func readOperatorJWT(s string) (string, error) {
	if strings.HasPrefix(s, "eyJ") {
		return s, nil
	}
	info, err := os.Stat(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("not a JWT, and not a file that can be read: %w", err)
	case !info.Mode().IsRegular() || info.Size() > maxOperatorFile:
		// A device or a huge file is no operator JWT, and reading it
		// could take forever.
		return "", fmt.Errorf("%s is not a JWT file (a regular file of at most %d bytes)", s, maxOperatorFile)
	}
	data, err := os.ReadFile(s)
	if err != nil {
		return "", fmt.Errorf("not a JWT, and not a file that can be read: %w", err)
	}
	return string(data), nil
}

func (v operatorValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "[…]"
}

func (v operatorValue) kind() string { return "list" }

// preloadValue binds resolver_preload: account public key → account JWT.
// Its keys are upper-case keys that viper would fold, so Load hands set
// the block as the file has it (loadPreload).
type preloadValue struct{ p **Preload }

func (v preloadValue) set(raw any) error {
	var bp blockParser
	m, ok := bp.block("", raw)
	if !ok {
		return bp.errs
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s, ok := m[k].(string)
		if !ok || strings.TrimSpace(s) == "" {
			bp.bad("."+k, "%s is not an account JWT", describe(m[k]))
			continue
		}
		out[k] = strings.TrimSpace(s)
	}
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = &Preload{Accounts: out}
	return nil
}

func (v preloadValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v preloadValue) kind() string { return "block" }

// loadPreload takes resolver_preload out of a file's normalized settings
// and sets cfg.ResolverPreload from the block as the file writes it.
func loadPreload(path string, normal map[string]any, cfg *Config) ([]*KeyError, error) {
	if _, ok := normal["resolver_preload"]; !ok {
		return nil, nil
	}
	delete(normal, "resolver_preload")
	raw, _, err := readRawBlock(path, "resolver_preload")
	if err != nil {
		return nil, err
	}
	source := "file " + path
	err = preloadValue{&cfg.ResolverPreload}.set(raw)
	if err == nil {
		return nil, nil
	}
	nested := asNested(err)
	if nested == nil {
		return []*KeyError{{Key: "resolver_preload", Source: source, Reason: err.Error(), Err: ErrBadValue}}, nil
	}
	errs := make([]*KeyError, 0, len(nested))
	for _, ne := range nested {
		errs = append(errs, &KeyError{Key: "resolver_preload" + ne.path, Source: source, Reason: ne.reason, Err: ne.err})
	}
	return errs, nil
}

// OperatorMode reports whether c turns operator (JWT) mode on: with the
// operators' JWTs, or their public keys (trusted_keys).
func (c Config) OperatorMode() bool { return c.Operator != nil || c.TrustedKeys != nil }

// checkOperator reports operator mode configured by halves, and what
// operator mode replaces.
func (c Config) checkOperator(bad func(key, format string, args ...any)) {
	switch {
	case !c.OperatorMode() && c.Resolver != nil:
		bad("resolver", "needs operator (the trusted operator's JWT)")
	case !c.OperatorMode() && c.ResolverPreload != nil:
		bad("resolver_preload", "needs operator and a resolver")
	case c.Operator != nil && c.TrustedKeys != nil:
		bad("trusted_keys", "conflicting options for 'TrustedKeys' and 'TrustedOperators': set operator or trusted_keys, not both")
	case c.OperatorMode() && c.Resolver == nil:
		bad("operator", "needs a resolver: resolver: MEMORY with the account JWTs in resolver_preload, or resolver { type: full, dir: ... }")
	case c.OperatorMode() && c.Accounts != nil && len(c.Accounts.Entries) > 0:
		bad("accounts", "operator mode takes its accounts from JWTs (resolver_preload); remove the accounts block")
	case c.OperatorMode() && c.Authorization != nil && (c.Authorization.Token != "" || c.Authorization.User != "" || c.Authorization.Users != nil):
		bad("authorization", "operator mode authenticates users by their JWTs; remove the authorization block")
	}
}
