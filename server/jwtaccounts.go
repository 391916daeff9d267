package server

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
)

// withOperator compiles o.Operator, when set, and turns each account JWT
// into an Account of o (named by its public key, as the reference names
// them), so the accounts machinery (account.go, imports.go, accountjs.go)
// serves JWT accounts as it serves the accounts block's. The system
// account's JWT names the system account instead. o's slices are copied,
// never appended to in place.
func (o Options) withOperator() (Options, error) {
	if o.Operator == nil {
		return o, nil
	}
	a := o.Authorization
	switch {
	case a.Token != "" || a.User != "" || len(a.Users) > 0:
		return o, fmt.Errorf("server: operator: operator mode authenticates users by their JWTs; Authorization must have no token, user or users")
	case len(o.Accounts) > 0 || len(o.SystemAccount.Users) > 0:
		return o, fmt.Errorf("server: operator: operator mode takes its accounts from JWTs; Accounts and SystemAccount.Users must be empty")
	}
	t, err := compileOperator(o.Operator)
	if err != nil {
		return o, err
	}
	o.trust = t
	if o.Logger != nil {
		for _, key := range sortedKeys(o.Operator.Accounts) {
			if err := t.skipped[key]; err != nil {
				o.Logger.Warn("account JWT not trusted: the account is skipped", "account", key, "reason", err.Error())
			}
		}
	}
	o.Accounts = slices.Clone(o.Accounts)
	if t.system != "" {
		o.SystemAccount.Name = t.system
	}
	t.grants = t.checkImports(time.Now(), o.Logger)
	for _, key := range slices.Sorted(maps.Keys(t.accounts)) {
		if key == t.system {
			continue
		}
		o.Accounts = append(o.Accounts, accountFromClaims(t.accounts[key], o.JetStream, t.grants))
	}
	return o, nil
}

// accountFromClaims is the Account an account JWT describes, with the
// imports g honours and its token-required exports open to the accounts
// g granted them (activation.go). The JWT's -1 (no limit) is bus's 0.
func accountFromClaims(ac *jwt.AccountClaims, jetStream bool, g *importGrants) Account {
	a := Account{
		Name: ac.Subject,
		Limits: AccountLimits{
			MaxConnections:   jwtLimit(ac.Limits.Conn),
			MaxSubscriptions: jwtLimit(ac.Limits.Subs),
			MaxPayload:       jwtLimit(ac.Limits.Payload),
		},
		DefaultPermissions: permissionsFromClaims(ac.DefaultPermissions),
		nameTag:            ac.Name,
	}
	js := jetStreamClaims(ac)
	if jetStream && (js.MemoryStorage != 0 || js.DiskStorage != 0) {
		a.JetStream = &AccountJetStream{
			MaxMemory:     int64(jwtLimit(js.MemoryStorage)),
			MaxStore:      int64(jwtLimit(js.DiskStorage)),
			MaxStreams:    jwtLimit(js.Streams),
			MaxConsumers:  jwtLimit(js.Consumer),
			MaxAckPending: jwtLimit(js.MaxAckPending),
			// The JWT's 0 here is no bound, as in the reference.
			MemoryMaxStreamBytes: max(js.MemoryMaxStreamBytes, 0),
			StoreMaxStreamBytes:  max(js.DiskMaxStreamBytes, 0),
			MaxBytesRequired:     js.MaxBytesRequired,
		}
	}
	for _, e := range ac.Exports {
		// A token-required export is shared with the accounts whose
		// activation tokens passed, and with no one without them.
		var allowed []string
		if e.TokenReq {
			if allowed = g.granted[e]; len(allowed) == 0 {
				continue
			}
		}
		if e.IsService() {
			se := ServiceExport{
				Subject: string(e.Subject), Accounts: allowed, ResponseType: string(e.ResponseType), ResponseThreshold: e.ResponseThreshold,
			}
			if l := e.Latency; l != nil {
				// The JWT's sampling 0 is "headers", as bus's.
				se.Latency = &Latency{Sampling: int(l.Sampling), Subject: string(l.Results)}
			}
			a.Exports.Services = append(a.Exports.Services, se)
		} else {
			a.Exports.Streams = append(a.Exports.Streams, StreamExport{Subject: string(e.Subject), Accounts: allowed})
		}
	}
	for _, im := range ac.Imports {
		if !g.keep[im] {
			continue
		}
		local := string(im.LocalSubject)
		if local == "" {
			//lint:ignore SA1019 account JWTs issued before local_subject existed carry the local subject in To
			local = string(im.To)
		}
		if im.IsService() {
			a.Imports.Services = append(a.Imports.Services, ServiceImport{Account: im.Account, Subject: string(im.Subject), To: local})
		} else {
			a.Imports.Streams = append(a.Imports.Streams, StreamImport{Account: im.Account, Subject: string(im.Subject), To: local})
		}
	}
	for _, src := range slices.Sorted(maps.Keys(ac.Mappings)) {
		m := Mapping{Source: string(src)}
		for _, d := range ac.Mappings[src] {
			m.Destinations = append(m.Destinations, MapDestination{Subject: string(d.Subject), Weight: int(d.GetWeight()), Cluster: d.Cluster})
		}
		a.Mappings = append(a.Mappings, m)
	}
	return a
}

// jetStreamClaims are the JetStream limits of an account JWT: its plain
// ones, or, when it sets none, its R1 tier's. bus is one server, where
// only single-replica streams exist (as on a reference server outside a
// cluster), so the other tiers bound nothing.
func jetStreamClaims(ac *jwt.AccountClaims) jwt.JetStreamLimits {
	js := ac.Limits.JetStreamLimits
	if r1, ok := ac.Limits.JetStreamTieredLimits["R1"]; ok && js == (jwt.JetStreamLimits{}) {
		return r1
	}
	return js
}

// jwtLimit is a JWT's limit as bus's: negative (no limit) is 0.
func jwtLimit(n int64) int {
	if n < 0 || n > 1<<31-1 {
		return 0
	}
	return int(n)
}

// permissionsFromClaims is p as bus's Permissions; nil when p says
// nothing (everything allowed).
func permissionsFromClaims(p jwt.Permissions) *Permissions {
	if len(p.Pub.Allow)+len(p.Pub.Deny)+len(p.Sub.Allow)+len(p.Sub.Deny) == 0 && p.Resp == nil {
		return nil
	}
	out := &Permissions{}
	if len(p.Pub.Allow)+len(p.Pub.Deny) > 0 {
		out.Publish = &SubjectPermission{Allow: p.Pub.Allow, Deny: p.Pub.Deny}
	}
	if len(p.Sub.Allow)+len(p.Sub.Deny) > 0 {
		// A JWT writes a queue permission as "subject queue", as the
		// config file's permissions do.
		out.Subscribe = &SubjectPermission{Allow: trimAll(p.Sub.Allow), Deny: trimAll(p.Sub.Deny)}
	}
	if p.Resp != nil {
		out.Responses = &ResponsePermission{MaxMsgs: p.Resp.MaxMsgs, Expires: p.Resp.Expires}
		if out.Responses.MaxMsgs == 0 {
			out.Responses.MaxMsgs = DefaultResponseMaxMsgs
		}
		if out.Responses.Expires == 0 {
			out.Responses.Expires = DefaultResponseExpires
		}
	}
	return out
}

func trimAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.TrimSpace(s)
	}
	return out
}

// nameTag is the name claim of account key's JWT; "" outside operator
// mode or without one.
func (t *trust) nameTag(key string) string {
	if t == nil || t.accounts[key] == nil {
		return ""
	}
	return t.accounts[key].Name
}

// hasSystemUsers reports whether the system account can have users: it
// has users configured, or it is an account JWT's in operator mode.
func (o Options) hasSystemUsers() bool {
	return len(o.SystemAccount.Users) > 0 || o.trust != nil && o.trust.system != ""
}
