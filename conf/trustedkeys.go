package conf

import (
	"fmt"
	"strings"

	"github.com/nats-io/nkeys"
)

// trustedKeysValue binds trusted_keys (nats-server's alias trusted): the
// public keys of the trusted operators, in place of their JWTs. It turns
// operator mode on as the operator key does; account JWTs signed by one
// of the keys are trusted, with the resolver's rules.
type trustedKeysValue struct{ p **TrustedKeys }

// TrustedKeys is the trusted_keys key: operator public keys.
type TrustedKeys struct{ Keys []string }

func (v trustedKeysValue) set(raw any) error {
	var list []any
	switch r := raw.(type) {
	case string:
		list = []any{r}
	case []any:
		list = r
	default:
		return fmt.Errorf("%s is not an operator public key or a list of them", describe(raw))
	}
	if len(list) == 0 {
		return fmt.Errorf("an empty list trusts no one; leave the key out")
	}
	keys := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return fmt.Errorf("entry %d: %s is not a string", i, describe(e))
		}
		s = strings.TrimSpace(s)
		if !nkeys.IsValidPublicOperatorKey(s) {
			return fmt.Errorf("entry %d: trust key %q required to be a valid public operator nkey", i, s)
		}
		keys = append(keys, s)
	}
	*v.p = &TrustedKeys{Keys: keys}
	return nil
}

func (v trustedKeysValue) String() string {
	if *v.p == nil {
		return ""
	}
	return strings.Join((*v.p).Keys, ",")
}

func (v trustedKeysValue) kind() string { return "list" }
