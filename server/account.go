package server

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/subjects"
)

// Account is one account of the accounts block besides the system
// account, as in nats-server: a subject space of its own. Its users see
// only each other's messages (and the server's answers to them), never
// the global account's or another account's, and their publishes reach
// no one outside it. Users of Authorization stay in the global account.
type Account struct {
	Name string
	// Users authenticate as Authorization's users do; names and nkeys
	// are unique across every account and Authorization.
	Users []User
	// DefaultPermissions apply to the account's users without
	// permissions of their own.
	DefaultPermissions *Permissions
	// Mappings reroute the account's publishes, as Options.Mappings do
	// the global account's.
	Mappings []Mapping
	// Limits bound the account's connections (nats-server's account
	// limits block).
	Limits AccountLimits
	// Exports and Imports share streams and services with other
	// accounts (imports.go).
	Exports Exports
	Imports Imports
	// JetStream gives the account a JetStream of its own (accountjs.go);
	// nil: none, and its $JS.API requests get the reference's 503
	// "JetStream not enabled for account" when the server has JetStream.
	JetStream *AccountJetStream
	// nameTag is an account JWT's name claim, which monitoring shows as
	// the reference does (jwtaccounts.go); "" shows Name.
	nameTag string
}

// AccountLimits are an account's limits; 0 means no limit of that kind.
type AccountLimits struct {
	// MaxConnections bounds the account's connections together: one
	// more is refused with 'maximum account active connections exceeded'.
	MaxConnections int
	// MaxSubscriptions and MaxPayload bound each connection of the
	// account, as the reference applies them: the lower of the
	// account's and the server's limit holds.
	MaxSubscriptions int
	MaxPayload       int
}

// account is a subject space at run time: the global account, the
// system account, or an Account. The connections authenticated into it
// publish and subscribe in its trie only (conn.trie), so isolation costs
// the hot path nothing: the router never looks at another trie.
type account struct {
	name   string
	system bool
	// nameTag is what monitoring's name_tag shows: an account JWT's
	// name claim, else name.
	nameTag string
	trie    *subjects.Trie[*subscription]
	// mapper holds the account's mappings (never nil; it holds nil
	// for none); a reload or a JWT update swaps what it holds.
	mapper *liveMappings
	// limits are swapped by Reload; connections read them as they
	// authenticate and subscribe.
	limits atomic.Pointer[AccountLimits]
	conns  atomic.Int64 // connections authenticated into it (conn.counted)
	// internal counts the server's own subscriptions in trie (the
	// services of installAccountServices, its JetStream's).
	internal atomic.Int64
	// js is the account's JetStream (accountjs.go); nil without. Atomic:
	// a reload may start it while monitoring reads it.
	js atomic.Pointer[jetstream.Service]
	// noJetStream is the subscription answering its JetStream API while
	// it has none (installNoJetStream); changed under reloadMu only.
	noJetStream *subscription
	// Traffic of the account's connections that have closed; live ones
	// count their own.
	closedInMsgs, closedInBytes, closedOutMsgs, closedOutBytes atomic.Int64
}

// foldClosed adds a closed connection's traffic to the account's.
func (a *account) foldClosed(c *conn) {
	outMsgs, outBytes := c.out.counts()
	a.closedInMsgs.Add(c.inMsgs.Load())
	a.closedInBytes.Add(c.inBytes.Load())
	a.closedOutMsgs.Add(outMsgs)
	a.closedOutBytes.Add(outBytes)
}

// accountTraffic is each account's traffic: its connections' (an
// unauthenticated one is the global account's) and its closed ones'.
func (s *Server) accountTraffic() map[*account]*accountStats {
	out := map[*account]*accountStats{}
	get := func(a *account) *accountStats {
		t := out[a]
		if t == nil {
			t = &accountStats{traffic: traffic{
				inMsgs: a.closedInMsgs.Load(), inBytes: a.closedInBytes.Load(),
				outMsgs: a.closedOutMsgs.Load(), outBytes: a.closedOutBytes.Load(),
			}}
			out[a] = t
		}
		return t
	}
	for _, a := range s.accountSet() {
		get(a)
	}
	get(s.global).slow = s.slowConsumers.Load()
	conns := s.connList()
	for _, c := range conns {
		c.mu.Lock()
		acc := c.acc
		c.mu.Unlock()
		t := get(acc)
		outMsgs, outBytes := c.out.counts()
		t.conns++
		t.inMsgs += c.inMsgs.Load()
		t.inBytes += c.inBytes.Load()
		t.outMsgs += outMsgs
		t.outBytes += outBytes
	}
	return out
}

// allClientSubs counts the clients' subscriptions in the global and the
// configured accounts, for /varz as the reference counts them.
func (s *Server) allClientSubs() int {
	n := s.clientSubs()
	for _, a := range s.accountSet() {
		n += a.trie.Count() - int(a.internal.Load())
	}
	return n
}

// accountStats is one account's traffic and slow consumers.
type accountStats struct {
	traffic
	slow int64
}

// accountSublistStats is sublistStats for a configured account's trie.
func accountSublistStats(a *account) SublistStats {
	return trieStats(a.trie, int(a.internal.Load()))
}

func newAccount(name string, mapper *mapper, limits AccountLimits) *account {
	a := &account{name: name, trie: subjects.NewTrie[*subscription](), mapper: newLiveMappings(mapper)}
	a.limits.Store(&limits)
	return a
}

// admit counts one more connection, or reports false when the account
// is at its connection limit.
func (a *account) admit() bool {
	n := a.conns.Add(1)
	if limit := a.limits.Load().MaxConnections; limit > 0 && n > int64(limit) {
		a.conns.Add(-1)
		return false
	}
	return true
}

// lowerLimit is the lower of a server-wide and an account limit, either
// 0 for none.
func lowerLimit(server, account int) int {
	if server == 0 || account > 0 && account < server {
		return account
	}
	return server
}

// accountSet is the configured accounts by name (neither the global nor
// the system account). Immutable: Reload stores a new one, keeping the
// account of each name it still has, with its trie.
type accountSet map[string]*account

// buildAccounts makes the accounts of opts, reusing old's of the same
// name (a reload: their subscriptions stay). The reused accounts take
// their new limits and mappings only at commit, once everything else of
// the change has been checked, so a refused change applies nothing.
func (s *Server) buildAccounts(opts []Account, old accountSet) (set accountSet, commit func(), err error) {
	set = accountSet{}
	type update struct {
		acc    *account
		limits AccountLimits
		mapper *mapper
	}
	var updates []update
	for _, a := range opts {
		m, err := newMapper(a.Mappings)
		if err != nil {
			return nil, nil, fmt.Errorf("server: account %q: %w", a.Name, err)
		}
		if acc := old[a.Name]; acc != nil {
			updates = append(updates, update{acc, a.Limits, m})
			set[a.Name] = acc
			continue
		}
		acc := newAccount(a.Name, m, a.Limits)
		acc.nameTag = cmp.Or(a.nameTag, a.Name)
		if err := s.installAccountServices(acc); err != nil {
			return nil, nil, err
		}
		if err := s.installNoJetStream(acc, a.JetStream); err != nil {
			return nil, nil, err
		}
		set[a.Name] = acc
	}
	commit = func() {
		for _, u := range updates {
			u.acc.limits.Store(&u.limits)
			u.acc.mapper.current.Store(u.mapper)
		}
	}
	return set, commit, nil
}

// accountSet is the accounts in force.
func (s *Server) accountSet() accountSet { return *s.accounts.Load() }

// accountFor is the account a user is in: the global account for nil.
func (s *Server) accountFor(id *identity) *account {
	if id != nil && id.acc != nil {
		return id.acc
	}
	return s.global
}

// ownsUser reports whether id is a user of acc, as the JetStream of acc
// asks about its assets' owners. The global account keeps the system
// account's users, as before accounts.
func (s *Server) ownsUser(acc *account, id *identity) bool {
	if acc == s.global {
		return id.acc == nil || id.acc.system
	}
	return id.acc == acc
}

// lookupAccount is the account monitoring names name ($G for the global
// one), or nil.
func (s *Server) lookupAccount(name string) *account {
	switch {
	case name == globalAccount:
		return s.global
	case s.hasSystemAccount(name):
		return s.sys
	}
	return s.accountSet()[name]
}

// accountNames lists the accounts monitoring shows, sorted, the system
// account's included when it has users.
func (s *Server) accountNames() []string {
	names := slices.Collect(maps.Keys(s.accountSet()))
	names = append(names, globalAccount)
	if s.opts.hasSystemUsers() {
		names = append(names, s.sys.name)
	}
	slices.Sort(names)
	return names
}

// validateAccounts checks the accounts against each other, the system
// account and Authorization, with the reference's words where it has
// them.
func validateAccounts(o Options) error {
	taken := map[string]bool{}
	for _, u := range o.Authorization.Users {
		taken[u.label()] = true
	}
	for _, u := range o.SystemAccount.Users {
		taken[u.label()] = true
	}
	names := map[string]bool{o.SystemAccount.name(): true}
	for _, a := range o.Accounts {
		switch {
		case a.Name == "":
			return fmt.Errorf("server: accounts: an account needs a name")
		case a.Name == globalAccount:
			return fmt.Errorf("server: accounts: %q is a Reserved Account", a.Name)
		case names[a.Name]:
			return fmt.Errorf("server: accounts: Duplicate Account Entry: %s", a.Name)
		case len(a.Users) > 0 && o.Authorization.User != "":
			return fmt.Errorf("server: account %q: Can not have a single user/pass and accounts", a.Name)
		case len(a.Users) > 0 && o.Authorization.Token != "":
			return fmt.Errorf("server: account %q: Can not have a token and accounts", a.Name)
		}
		names[a.Name] = true
		if err := a.Limits.validate(); err != nil {
			return fmt.Errorf("server: account %q limits: %w", a.Name, err)
		}
		if err := a.DefaultPermissions.validate(); err != nil {
			return fmt.Errorf("server: account %q default permissions: %w", a.Name, err)
		}
		for i, u := range a.Users {
			if err := u.validate(); err != nil {
				return fmt.Errorf("server: account %q users[%d]: %w", a.Name, i, err)
			}
			if taken[u.label()] {
				return fmt.Errorf("server: account %q users[%d]: Duplicate user %q detected", a.Name, i, u.label())
			}
			taken[u.label()] = true
		}
		if _, err := newMapper(a.Mappings); err != nil {
			return fmt.Errorf("server: account %q: %w", a.Name, err)
		}
		if err := a.validateJetStream(o.JetStream); err != nil {
			return err
		}
	}
	if err := validateImports(o.Accounts); err != nil {
		return err
	}
	if err := jetStreamReservationsFit(o); err != nil {
		return err
	}
	if n := o.Authorization.NoAuthUser; n != "" && !taken[n] {
		return fmt.Errorf("server: authorization: no_auth_user %q is not one of the users", n)
	}
	return nil
}

// validate range-checks the limits: 0 (none) or 1 up to what the
// reference stores (an int32).
func (l AccountLimits) validate() error {
	for _, f := range []struct {
		key string
		n   int
	}{{"max_connections", l.MaxConnections}, {"max_subscriptions", l.MaxSubscriptions}, {"max_payload", l.MaxPayload}} {
		if f.n < 0 || f.n > 1<<31-1 {
			return fmt.Errorf("%s %d out of range 1..%d (0 for no limit)", f.key, f.n, 1<<31-1)
		}
	}
	return nil
}

// addAccountUsers compiles an account's users (the system account's or
// an Account's) into au, each bound to acc. When Authorization has a
// users list, or no authentication at all, they join it, so a name is
// looked up once and no_auth_user may name one of them, as in the
// reference; beside a token or single user (which the reference refuses
// for other accounts) they are kept apart and tried first.
func (au *authenticator) addAccountUsers(acc *account, users []User, defaults *Permissions) {
	if len(users) == 0 {
		return
	}
	au.required = true
	if au.users == nil && au.token == "" && au.user == "" {
		au.users, au.nkeys = map[string]*identityEntry{}, map[string]*identityEntry{}
	}
	byName, byKey := au.users, au.nkeys
	if byName == nil {
		if au.sysUsers == nil {
			au.sysUsers, au.sysNkeys = map[string]*identityEntry{}, map[string]*identityEntry{}
		}
		byName, byKey = au.sysUsers, au.sysNkeys
	}
	fallback := compilePermissions(defaults)
	for _, u := range users {
		perms := fallback
		if u.Permissions != nil {
			perms = compilePermissions(u.Permissions)
		}
		id := &identity{name: u.label(), perms: perms, acc: acc, nkey: u.Nkey, secret: u.Password}
		id.connTypes, _ = compileConnTypes(u.AllowedConnectionTypes) // validated
		e := &identityEntry{password: u.Password, nkey: u.Nkey, id: id}
		if u.Nkey != "" {
			byKey[u.Nkey] = e
			au.nonce = true
		} else {
			byName[u.Name] = e
		}
	}
}

// newAuthenticatorFor compiles who may connect under opts, with the
// accounts of set.
func (s *Server) newAuthenticatorFor(opts *Options, auth Authorization, tlsMap bool, set accountSet) *authenticator {
	au := newAuthenticator(auth, tlsMap)
	au.callout = compileCallout(opts.Authorization.Callout)
	au.addAccountUsers(s.sys, opts.SystemAccount.Users, nil)
	for _, a := range opts.Accounts {
		au.addAccountUsers(set[a.Name], a.Users, a.DefaultPermissions)
	}
	if opts.trust != nil {
		au.required, au.nonce = true, true
		au.jwt = newJWTAuth(opts.trust, set, s.sys, time.Now)
	}
	if n := auth.NoAuthUser; n != "" && au.users != nil {
		if au.noAuth = au.users[n]; au.noAuth == nil {
			au.noAuth = au.nkeys[n]
		}
	}
	return au
}

// enterAccount moves c into id's account, when that is not c's: the
// subscriptions made so far (by a no_auth_user, or before a second
// CONNECT) are dropped, as they belong to the other space. It refuses
// when the account is at its connection limit.
func (c *conn) enterAccount(id *identity) error {
	acc := c.srv.accountFor(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil { // closed meanwhile: count nothing
		return errConnClosed
	}
	if c.counted != acc {
		c.leaveAccountLocked()
		if !acc.admit() {
			return errAccountConnections
		}
		c.counted = acc
	}
	c.acc = acc
	if acc.trie != c.trie {
		c.dropSubsLocked()
		c.trie = acc.trie
	}
	return nil
}

// leaveAccountLocked uncounts c from the account it was counted in.
// c.mu is held.
func (c *conn) leaveAccountLocked() {
	if c.counted != nil {
		c.counted.conns.Add(-1)
		c.counted = nil
	}
}

// sendConnectInfo tells a client that takes INFO updates, after its
// first PONG as the reference does, what the first INFO could not say:
// the account it is in (nats.go's RemoteAccount), the max_payload that
// account allows when lower than the server's (so nats.go refuses a
// publish too big before sending it), and whether it is the system
// account (`nats account info` shows it). As the reference, every such
// client gets it, whatever its account.
func (c *conn) sendConnectInfo() {
	if !c.asyncInfo.Load() {
		return
	}
	info := c.srv.infoFields(c)
	info.MaxPayload = c.parser.maxPayload
	js, _ := json.Marshal(struct {
		serverInfo
		ConnectInfo   bool   `json:"connect_info"`
		RemoteAccount string `json:"remote_account"`
		System        bool   `json:"acc_is_sys,omitempty"`
	}{info, true, c.acc.name, c.acc.system})
	// Not traced, as the reference does not trace it (its protocol
	// trace shows the PONG last).
	c.out.appendControl("INFO " + string(js) + " \r\n")
	c.deferWake(c)
}
