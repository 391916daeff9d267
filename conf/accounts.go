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
	// JetStream is the account's jetstream key; nil: none.
	JetStream *AccountJetStream
	// Exports and Imports share streams and services with other
	// accounts (accountshares.go).
	Exports Exports
	Imports Imports
}

// AccountJetStream is an account's JetStream and its limits
// (nats-server's keys); 0 is no limit, as is -1 in the file.
type AccountJetStream struct {
	MaxMemory, MaxStore                     int64
	MaxStreams, MaxConsumers, MaxAckPending int
	// MemoryMaxStreamBytes and StoreMaxStreamBytes bound one memory or
	// file stream's max_bytes (0 for none); MaxBytesRequired refuses a
	// stream without max_bytes.
	MemoryMaxStreamBytes, StoreMaxStreamBytes int64
	MaxBytesRequired                          bool
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
	"nkey":       "an account's nkey matters only in operator mode, where accounts come from JWTs (resolver_preload); " + removeIt,
	"msg_trace":  "message tracing is not in bus yet; " + removeIt,
	"trace_dest": "message tracing is not in bus yet; " + removeIt,
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
	f := p.fields(path, known, [][]string{{"users"}, {"default_permissions"}, {"mappings", "maps"}, {"limits"}, {"jetstream"}, {"exports"}, {"imports"}})
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
			p.adopt(kpath, sub)
		case "limits":
			acc.Limits = p.accountLimits(kpath, v)
		case "jetstream":
			acc.JetStream = p.accountJetStream(kpath, v)
		case "exports":
			acc.Exports = p.exports(kpath, v)
		case "imports":
			acc.Imports = p.imports(kpath, v)
		}
	}
	return acc
}

// adopt takes the problems a parser of a nested block found, naming them
// under path.
func (p *blockParser) adopt(path string, sub blockParser) {
	for _, e := range sub.errs {
		e.path = path + e.path
		p.errs = append(p.errs, e)
	}
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

// accountJetStream parses an account's jetstream key: true or
// "enabled", false or "disabled", or a block of limits.
func (p *blockParser) accountJetStream(path string, raw any) *AccountJetStream {
	switch v := raw.(type) {
	case bool:
		if v {
			return &AccountJetStream{}
		}
		return nil
	case string:
		switch strings.ToLower(v) {
		case "enabled", "enable":
			return &AccountJetStream{}
		case "disabled", "disable":
			return nil
		}
		p.bad(path, "expected 'enabled' or 'disabled', got %q", v)
		return nil
	case map[string]any:
	default:
		p.bad(path, "%s is not true, false, enabled, disabled or a block", describe(raw))
		return nil
	}
	m := maps.Clone(raw.(map[string]any))
	js := &AccountJetStream{}
	for k := range m {
		switch strings.ToLower(k) {
		case "cluster_traffic":
			p.errs = append(p.errs, &nestedError{path: path + "." + k, reason: "bus runs as a single server and has no cluster traffic; " + removeIt, err: ErrUnsupportedKey})
			delete(m, k)
		}
	}
	f := p.fields(path, m, [][]string{
		{"max_memory", "max_mem", "mem", "memory"}, {"max_store", "max_file", "max_disk", "store", "disk"},
		{"max_streams", "streams"}, {"max_consumers", "consumers"}, {"max_ack_pending"},
		{"max_bytes_required", "max_stream_bytes", "max_bytes"},
		{"memory_max_stream_bytes", "mem_max_stream_bytes"}, {"store_max_stream_bytes", "disk_max_stream_bytes"},
	})
	if v, ok := f["max_bytes_required"]; ok {
		delete(f, "max_bytes_required")
		if js.MaxBytesRequired, ok = v.(bool); !ok {
			p.bad(path+".max_bytes_required", "%s is not true or false", describe(v))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(f)) {
		v, kpath := f[key], path+"."+key
		n, ok := number(v)
		perStream := key == "memory_max_stream_bytes" || key == "store_max_stream_bytes"
		switch {
		case !ok && perStream:
			p.bad(kpath, "%s is not a whole number or a size", describe(v))
			continue
		case perStream && n < -1:
			p.bad(kpath, "%d is out of range (0 or -1 for no bound)", n)
			continue
		case perStream:
			n = max(n, 0) // 0 and -1: no bound, as in nats-server
			if key == "memory_max_stream_bytes" {
				js.MemoryMaxStreamBytes = n
			} else {
				js.StoreMaxStreamBytes = n
			}
			continue
		}
		switch {
		case !ok:
			p.bad(kpath, "%s is not a whole number or a size", describe(v))
			continue
		case n == 0 && (key == "max_memory" || key == "max_store"):
			p.bad(kpath, "0 (no streams of that storage at all) is not in bus yet; set a size, or -1 for no limit")
			continue
		case n < -1 || key != "max_memory" && key != "max_store" && n > math.MaxInt32:
			p.bad(kpath, "%d is out of range (-1 for no limit)", n)
			continue
		}
		n = max(n, 0)
		switch key {
		case "max_memory":
			js.MaxMemory = n
		case "max_store":
			js.MaxStore = n
		case "max_streams":
			js.MaxStreams = int(n)
		case "max_consumers":
			js.MaxConsumers = int(n)
		case "max_ack_pending":
			js.MaxAckPending = int(n)
		}
	}
	return js
}

// safeDirName reports whether an account's name can name its store's
// directory (the server's rule, server/accountjs.go).
func safeDirName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool {
		return r < 0x20 || r == 0x7f || strings.ContainsRune(".*>/\\ :", r)
	})
}

// shares reports whether a exports or imports anything.
func (a Account) shares() bool {
	return len(a.Exports.Streams)+len(a.Exports.Services)+len(a.Imports.Streams)+len(a.Imports.Services) > 0
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
		case a.Name == sys && (a.Mappings != nil || a.Limits != AccountLimits{} || a.DefaultPermissions != nil || a.JetStream != nil || a.shares()):
			bad(key, "the system account takes users only in bus; remove its default_permissions, mappings, limits, jetstream, exports and imports")
		case a.JetStream != nil && !c.JetStream.Enabled:
			bad(key+".jetstream", "needs JetStream on the server (jetstream: enabled)")
		case a.JetStream != nil && !safeDirName(a.Name):
			bad(key, "an account with jetstream needs a name fit for a directory, where its streams live (no '.', '*', '>', '/', '\\', ':', spaces or control characters)")
		}
	}
	if c.SystemAccount != "" && c.Account(c.SystemAccount) == nil && !c.OperatorMode() {
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
