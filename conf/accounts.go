package conf

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
)

// DefaultSystemAccount is the system account's name when system_account
// is not set: an account of that name is then the system account, as in
// nats-server.
const DefaultSystemAccount = "$SYS"

// Accounts is the accounts block.
type Accounts struct {
	Entries []Account // sorted by name
}

// Account is one entry of the accounts block. bus has one subject space,
// so the only account it takes is the system account (see
// docs/security.md); its users may make the $SYS monitoring requests.
type Account struct {
	Name  string
	Users []User
}

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
		acc := Account{Name: name}
		f := p.fields(path, am, [][]string{{"users"}})
		if v, ok := f["users"]; ok {
			acc.Users = p.users(path+".users", v)
		}
		out.Entries = append(out.Entries, acc)
	}
	return out
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

// checkAccounts reports accounts other than the system account (bus has
// no isolated accounts yet) and a system_account naming no account.
func (c Config) checkAccounts(bad func(key, format string, args ...any)) {
	sys := c.SystemAccountName()
	if c.Accounts == nil {
		c.Accounts = &Accounts{}
	}
	for _, a := range c.Accounts.Entries {
		if a.Name != sys {
			bad("accounts."+strconv.Quote(a.Name), "bus has one subject space: the only account it takes is the system account (system_account: %s); put other users in the authorization block", cmp.Or(sys, DefaultSystemAccount))
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
