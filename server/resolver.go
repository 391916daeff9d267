package server

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/jwt/v2"
)

// Resolver is a NATS resolver, nats-server's resolver block: account JWTs
// kept in Dir, seeded by Operator.Accounts (resolver_preload, each stored
// unless Dir has a newer one), and changed at run time by the operator
// through $SYS.REQ.CLAIMS.UPDATE and .DELETE (resolverreq.go), each change
// applied at once to the account and its connections. bus is one server:
// there are no other servers to look up an account from (Timeout) or to
// compare stores with (Interval), so those keys change nothing, and a
// cache knows only the JWTs pushed to it or in Dir.
type Resolver struct {
	// Type is ResolverFull or ResolverCache.
	Type string
	Dir  string
	// AllowDelete lets the operator delete JWTs; HardDelete removes
	// their files instead of renaming them to <key>.jwt.deleted.
	AllowDelete, HardDelete bool
	// Limit bounds the JWTs kept (0: none for full, 1000 for cache): a
	// full store refuses one more, a cache drops the JWT used least
	// recently (stored or read) from Dir (its account stays in force
	// until a restart, as the reference keeps an account it has loaded).
	Limit int64
	// TTL is how long a cache keeps a JWT in Dir; 0 for ever.
	TTL time.Duration
	// Interval and Timeout are the reference's sync interval and lookup
	// timeout, with nothing to do on one server.
	Interval, Timeout time.Duration
}

// The Resolver types.
const (
	ResolverFull  = "full"
	ResolverCache = "cache"
)

// validate checks r's shape as the reference does.
func (r *Resolver) validate() error {
	switch {
	case r.Type != ResolverFull && r.Type != ResolverCache:
		return fmt.Errorf("server: resolver: type %q is neither %q nor %q", r.Type, ResolverFull, ResolverCache)
	case r.Dir == "":
		return fmt.Errorf("server: resolver: dir has no value and needs to point to a directory")
	case r.Type == ResolverCache && (r.AllowDelete || r.HardDelete || r.Interval != 0):
		return fmt.Errorf("server: resolver: CACHE does not accept allow_delete, hard_delete or interval")
	case r.Type == ResolverFull && r.TTL != 0:
		return fmt.Errorf("server: resolver: FULL does not accept ttl")
	case r.Limit < 0 || r.TTL < 0:
		return fmt.Errorf("server: resolver: limit and ttl must not be negative")
	}
	return nil
}

// openResolver opens o's resolver store, when it has one, stores the
// preloaded JWTs in it, and returns o with the store's JWTs as its
// accounts. Without a NATS resolver it returns o and nil.
func openResolver(o Options) (*jwtStore, Options, error) {
	if o.Operator == nil || o.Operator.Resolver == nil {
		return nil, o, nil
	}
	if err := o.Operator.Resolver.validate(); err != nil {
		return nil, o, err
	}
	st, err := openJWTStore(o.Operator.Resolver, time.Now)
	if err != nil {
		return nil, o, err
	}
	o, err = withStoredAccounts(o, st)
	return st, o, err
}

// withStoredAccounts stores o's preloaded JWTs in st unless it has newer
// ones, and returns o with st's JWTs, and the preloaded ones st did not
// keep, as the accounts.
func withStoredAccounts(o Options, st *jwtStore) (Options, error) {
	for _, key := range sortedKeys(o.Operator.Accounts) {
		if err := st.saveIfNewer(key, o.Operator.Accounts[key]); err != nil {
			return o, fmt.Errorf("server: resolver_preload %s: %w", key, err)
		}
	}
	op := *o.Operator
	op.Accounts = st.all()
	for key, token := range o.Operator.Accounts {
		if _, ok := op.Accounts[key]; !ok {
			// A cache past its limit dropped it from dir; preloaded, it
			// is an account still (the system account's above all).
			op.Accounts[key] = token
		}
	}
	o.Operator = &op
	return o, nil
}

// applyAccountJWTs puts the account JWTs in force (account key → JWT,
// the system account's included) that edit makes of those in force, as
// a reload would: connections of a removed account or a revoked user are
// closed, the others get their new permissions; the account limits,
// mappings, exports, imports and JetStream (its limits, or the account
// gaining or losing it) hold for what comes next.
func (s *Server) applyAccountJWTs(edit func(accounts map[string]string)) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	old := s.liveOpts()
	opts := old.clone()
	op := *old.Operator
	op.Accounts = maps.Clone(old.Operator.Accounts)
	edit(op.Accounts)
	opts.Operator, opts.Accounts, opts.trust = &op, nil, nil
	opts.Logger = old.Logger
	opts, err := opts.withOperator()
	if err != nil {
		return err
	}
	if err := opts.validate(); err != nil {
		return err
	}
	prev := s.accountSet()
	set, commitAccounts, err := s.buildAccounts(opts.Accounts, prev)
	if err != nil {
		return err
	}
	if s.js != nil {
		if err := s.startAccountsJetStream(opts.Accounts, set); err != nil {
			return err
		}
	}
	commitAccounts()
	updateAccountsJetStream(opts.Accounts, set)
	if s.js != nil {
		s.switchAccountsJetStream(opts.Accounts, set)
	}
	s.reinstallImports(old.Accounts, opts.Accounts, prev, set)
	au, wsAu := s.newAuthenticators(&opts, set)
	s.live.Store(&opts)
	s.accounts.Store(&set)
	s.authn.Store(au)
	s.wsAuthn.Store(wsAu)
	stopRemovedJetStream(prev, set)
	s.reauthorizeJWTUsers(opts.trust)
	s.closeOverAccountLimits(set)
	if s.js != nil {
		s.js.RightsChanged()
		s.accountsRightsChanged()
	}
	s.armActivationExpiry(opts.trust)
	return nil
}

// reauthorizeJWTUsers checks every connection against the new accounts
// as a reload does, but closes a user whose account JWT is gone, or that
// it revokes, with the reference's words for an account JWT update.
func (s *Server) reauthorizeJWTUsers(t *trust) {
	for _, c := range s.connList() {
		if text, reason := jwtUserGone(c.authed.Load(), t); text != "" {
			c.log.Warn("connection closed by an account JWT update", "reason", text)
			c.closeWithErr(text, reason)
			continue
		}
		c.reauthorize(c.auth())
	}
}

// jwtUserGone is the error and close reason for id, a user JWT's
// identity, when t no longer has its account or revokes it; "" else.
func jwtUserGone(id *identity, t *trust) (text, reason string) {
	if id == nil || !id.fromJWT {
		return "", ""
	}
	uc, err := jwt.DecodeUserClaims(id.secret)
	if err != nil {
		return "", ""
	}
	key := uc.Issuer
	if uc.IssuerAccount != "" {
		key = uc.IssuerAccount
	}
	ac := t.accounts[key]
	switch {
	case ac == nil:
		return "Account Authentication Expired", "Authentication Expired"
	case ac.IsClaimRevoked(uc):
		return "User Authentication Revoked", "Authentication Revoked"
	}
	return "", ""
}

// closeOverAccountLimits closes the newest connections of each account
// over its (lowered) connection limit, as the reference closes them on
// an account JWT update.
func (s *Server) closeOverAccountLimits(set accountSet) {
	over := map[*account][]*conn{}
	for _, c := range s.connList() {
		c.mu.Lock()
		acc := c.counted
		c.mu.Unlock()
		if acc != nil && set[acc.name] == acc {
			over[acc] = append(over[acc], c)
		}
	}
	for acc, conns := range over {
		limit := acc.limits.Load().MaxConnections
		if limit == 0 || len(conns) <= limit {
			continue
		}
		slices.SortFunc(conns, func(a, b *conn) int { return cmp.Compare(a.id, b.id) })
		for _, c := range conns[limit:] {
			c.log.Warn("connection closed by an account JWT update: over the account's connection limit", "account", acc.name, "limit", limit)
			c.closeWithErr(errAccountConnections.text, errAccountConnections.text)
		}
	}
}

// armActivationExpiry compiles the accounts again when the first of t's
// accepted activation tokens expires, so its import stops then, as the
// reference stops it.
func (s *Server) armActivationExpiry(t *trust) {
	if s.activationTimer != nil {
		s.activationTimer.Stop()
		s.activationTimer = nil
	}
	if t == nil || t.grants == nil || t.grants.nextExpiry.IsZero() {
		return
	}
	s.activationTimer = time.AfterFunc(time.Until(t.grants.nextExpiry)+time.Second, func() {
		select {
		case <-s.quit:
			return
		default:
		}
		if err := s.applyAccountJWTs(func(map[string]string) {}); err != nil {
			s.log.Error("activation token expiry: accounts not compiled again", "err", err)
		}
	})
}

// stopActivationExpiry disarms armActivationExpiry's timer, at Shutdown.
func (s *Server) stopActivationExpiry() {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.activationTimer != nil {
		s.activationTimer.Stop()
		s.activationTimer = nil
	}
}

// validateClaims checks a pushed account JWT as the reference does
// before it stores one: the jwt library's blocking problems, time checks
// aside.
func validateClaims(ac *jwt.AccountClaims) error {
	var vr jwt.ValidationResults
	ac.Validate(&vr)
	if vr.IsBlocking(false) {
		return fmt.Errorf("validation errors: %v", vr.Errors())
	}
	return nil
}
