package conf

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DefaultSystemAccount is the system account's name when system_account
// is not set: an account of that name is then the system account, as in
// nats-server.
const DefaultSystemAccount = "$SYS"

// GlobalAccount is the account of the users outside the accounts block;
// no account of the block may take its name.
const GlobalAccount = "$G"

// Accounts is the accounts block.
type Accounts struct {
	Entries []Account // sorted by name
}

// Account is one entry of the accounts block: a subject space of its own
// (docs/security.md). The system account's users may make the $SYS
// monitoring requests; the other accounts' users see only their own
// account's messages.
type Account struct {
	Name               string
	Users              []User
	DefaultPermissions *Permissions
	Mappings           *Mappings // nil: none
	Limits             AccountLimits
}

// AccountLimits is an account's limits block (nats-server's keys); 0 is
// no limit, as is -1 in the file.
type AccountLimits struct {
	MaxConnections   int // the account's connections together
	MaxSubscriptions int // per connection
	MaxPayload       int // per message, in bytes
}

// accountUnsupported are an account's keys that nats-server has and bus
// refuses, with why.
var accountUnsupported = map[string]string{
	"jetstream":  "JetStream per account is not in bus yet; " + removeIt + " (the global account has JetStream)",
	"exports":    noExports,
	"imports":    noExports,
	"nkey":       "bus has no operator/JWT mode, where an account's nkey matters; " + removeIt,
	"msg_trace":  "message tracing is not in bus yet; " + removeIt,
	"trace_dest": "message tracing is not in bus yet; " + removeIt,
}

const noExports = "exports and imports between accounts are not in bus yet; " + removeIt + " (accounts are fully isolated)"

// accountsValue binds the accounts block. Account names are keys of the
// block and case-sensitive ("SYS", "$SYS"), which viper would fold; so,
// as for mappings, Load hands set the block read from the file directly.
type accountsValue struct{ p **Accounts }

func (v accountsValue) set(raw any) error {
	var bp blockParser
	a := bp.accounts(raw)
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = a
	return nil
}

func (v accountsValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v accountsValue) kind() string { return "block" }

// accounts parses the block: a map from account name to {users}.
func (p *blockParser) accounts(raw any) *Accounts {
	m, ok := p.block("", raw)
	if !ok {
		return nil
	}
	out := &Accounts{Entries: []Account{}}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		path := "." + strconv.Quote(name)
		am, ok := p.block(path, m[name])
		if !ok {
			continue
		}
		out.Entries = append(out.Entries, p.account(path, name, am))
	}
	return out
}

// account parses one account's block.
func (p *blockParser) account(path, name string, m map[string]any) Account {
	acc := Account{Name: name}
	known := map[string]any{}
	for k, v := range m {
		if reason, ok := accountUnsupported[strings.ToLower(k)]; ok {
			p.errs = append(p.errs, &nestedError{path: path + "." + k, reason: reason, err: ErrUnsupportedKey})
			continue
		}
		known[k] = v
	}
	f := p.fields(path, known, [][]string{{"users"}, {"default_permissions"}, {"mappings", "maps"}, {"limits"}})
	for _, key := range slices.Sorted(maps.Keys(f)) {
		v, kpath := f[key], path+"."+key
		switch key {
		case "users":
			acc.Users = p.users(kpath, v)
		case "default_permissions":
			acc.DefaultPermissions = p.permissions(kpath, v)
		case "mappings":
			var sub blockParser
			acc.Mappings = sub.mappings(v)
			for _, e := range sub.errs {
				e.path = kpath + e.path
				p.errs = append(p.errs, e)
			}
		case "limits":
			acc.Limits = p.accountLimits(kpath, v)
		}
	}
	return acc
}

// accountLimits parses an account's limits block: each a whole number
// from 1 to 2^31-1, or -1 for no limit. 0 is refused: nats-server takes
// it literally (no connection, subscription or payload at all), which
// no one means.
func (p *blockParser) accountLimits(path string, raw any) AccountLimits {
	var l AccountLimits
	m, ok := p.block(path, raw)
	if !ok {
		return l
	}
	f := p.fields(path, m, [][]string{
		{"max_connections", "max_conn"}, {"max_subscriptions", "max_subs"}, {"max_payload", "max_pay"}, {"max_leafnodes", "max_leafs"},
	})
	for _, key := range slices.Sorted(maps.Keys(f)) {
		v, kpath := f[key], path+"."+key
		if key == "max_leafnodes" {
			p.errs = append(p.errs, &nestedError{path: kpath, reason: "bus accepts no leaf node connections (it only dials out); " + removeIt, err: ErrUnsupportedKey})
			continue
		}
		n, ok := number(v)
		switch {
		case !ok:
			p.bad(kpath, "%s is not a whole number", describe(v))
			continue
		case n == 0:
			p.bad(kpath, "0 would refuse everything (nats-server's meaning); leave the key out or set -1 for no limit")
			continue
		case n < -1 || n > math.MaxInt32:
			p.bad(kpath, "%d is out of range 1..%d (-1 for no limit)", n, math.MaxInt32)
			continue
		}
		n = max(n, 0) // -1: no limit
		switch key {
		case "max_connections":
			l.MaxConnections = int(n)
		case "max_subscriptions":
			l.MaxSubscriptions = int(n)
		case "max_payload":
			l.MaxPayload = int(n)
		}
	}
	return l
}

// SystemAccountName is the name of the system account c configures:
// system_account, or DefaultSystemAccount when an account is so named;
// "" when there is none.
func (c Config) SystemAccountName() string {
	if c.SystemAccount != "" {
		return c.SystemAccount
	}
	if c.Account(DefaultSystemAccount) != nil {
		return DefaultSystemAccount
	}
	return ""
}

// Account is the account of the accounts block named name, or nil.
func (c Config) Account(name string) *Account {
	if c.Accounts == nil {
		return nil
	}
	for i := range c.Accounts.Entries {
		if c.Accounts.Entries[i].Name == name {
			return &c.Accounts.Entries[i]
		}
	}
	return nil
}

// checkAccounts reports a reserved account name, a system account with
// what only other accounts take, and a system_account naming no account.
func (c Config) checkAccounts(bad func(key, format string, args ...any)) {
	sys := c.SystemAccountName()
	if c.Accounts == nil {
		c.Accounts = &Accounts{}
	}
	for _, a := range c.Accounts.Entries {
		key := "accounts." + strconv.Quote(a.Name)
		switch {
		case a.Name == GlobalAccount:
			bad(key, "%q is a Reserved Account (the global one: put its users in the authorization block)", a.Name)
		case a.Name == sys && (a.Mappings != nil || a.Limits != AccountLimits{} || a.DefaultPermissions != nil):
			bad(key, "the system account takes users only in bus; remove its default_permissions, mappings and limits")
		}
	}
	if c.SystemAccount != "" && c.Account(c.SystemAccount) == nil {
		bad("system_account", "%q names no account of the accounts block", c.SystemAccount)
	}
}

// loadAccounts takes the accounts block out of a file's normalized
// settings, so that viper never sees it, and sets cfg.Accounts from the
// block as written in the file at path.
func loadAccounts(path string, normal map[string]any, cfg *Config) ([]*KeyError, error) {
	if _, ok := normal["accounts"]; !ok {
		return nil, nil
	}
	delete(normal, "accounts")
	raw, _, err := readRawBlock(path, "accounts")
	if err != nil {
		return nil, err
	}
	source := "file " + path
	err = accountsValue{&cfg.Accounts}.set(raw)
	if err == nil {
		return nil, nil
	}
	nested := asNested(err)
	if nested == nil {
		return []*KeyError{{Key: "accounts", Source: source, Reason: err.Error(), Err: ErrBadValue}}, nil
	}
	errs := make([]*KeyError, 0, len(nested))
	for _, ne := range nested {
		errs = append(errs, &KeyError{Key: "accounts" + ne.path, Source: source, Reason: ne.reason, Err: ne.err})
	}
	return errs, nil
}
