package conf

import (
	"maps"
	"slices"

	"github.com/nats-io/nkeys"
)

// AuthCallout is the authorization block's auth_callout, as nats-server
// spells it: who signs the callout's answers (issuer), where the service
// runs (account), which users skip it (auth_users), the service's
// encryption key (xkey) and the accounts it places users in
// (allowed_accounts). BypassAuthenticated is bus's own
// x_bus_bypass_authenticated: clients that authenticate by another
// configured method do not go through the callout (docs/security.md).
type AuthCallout struct {
	Issuer              string
	Account             string
	AuthUsers           []string
	XKey                string
	AllowedAccounts     []string
	BypassAuthenticated bool
}

// authCallout parses the block; the accounts and users it names are
// checked by the server, which knows them.
func (p *blockParser) authCallout(path string, raw any) *AuthCallout {
	m, ok := p.block(path, raw)
	if !ok {
		return nil
	}
	c := &AuthCallout{}
	f := p.fields(path, m, [][]string{
		{"issuer"}, {"account", "acc"}, {"auth_users", "users"}, {"xkey", "key"},
		{"allowed_accounts"}, {"x_bus_bypass_authenticated"},
	})
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, fpath := f[name], path+"."+name
		switch name {
		case "issuer":
			c.Issuer = p.str(fpath, v)
			if !nkeys.IsValidPublicAccountKey(c.Issuer) {
				p.bad(fpath, "%q is not a public account nkey (A…)", c.Issuer)
			}
		case "account":
			c.Account = p.str(fpath, v)
		case "auth_users":
			c.AuthUsers = p.names(fpath, v)
		case "xkey":
			c.XKey = p.str(fpath, v)
			if !nkeys.IsValidPublicCurveKey(c.XKey) {
				p.bad(fpath, "%q is not a public curve key (X…)", c.XKey)
			}
		case "allowed_accounts":
			c.AllowedAccounts = p.names(fpath, v)
		case "x_bus_bypass_authenticated":
			c.BypassAuthenticated = p.boolean(fpath, v)
		}
	}
	if _, ok := f["issuer"]; !ok {
		p.bad(path+".issuer", "auth_callout needs the issuer: the account key that signs the callout's answers")
	}
	if len(c.AuthUsers) == 0 {
		p.bad(path+".auth_users", "auth_callout needs auth_users: the users of the callout service, who skip the callout")
	}
	return c
}

// names reads a list of names; a single name is a list of one.
func (p *blockParser) names(path string, raw any) []string {
	list := p.strings(path, raw)
	for i, n := range list {
		if n == "" {
			p.bad(path, "entry %d is empty", i)
		}
	}
	return list
}
