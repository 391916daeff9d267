package server

import (
	"time"

	"github.com/nats-io/jwt/v2"
)

// jwtAuth authenticates users in operator mode: a client sends its user
// JWT and the INFO nonce signed with the user's seed. Immutable; built
// with the authenticator it belongs to.
type jwtAuth struct {
	trust    *trust
	accounts map[string]*account // by account public key
	now      func() time.Time
}

// newJWTAuth binds t's accounts to the server's: the system account's
// key to sys, the others to set's account of the same name.
func newJWTAuth(t *trust, set accountSet, sys *account, now func() time.Time) *jwtAuth {
	j := &jwtAuth{trust: t, accounts: map[string]*account{}, now: now}
	for key := range t.accounts {
		if key == t.system {
			j.accounts[key] = sys
		} else if acc := set[key]; acc != nil {
			j.accounts[key] = acc
		}
	}
	return j
}

// authenticate checks cr's user JWT and, with checkSig, its signature of
// nonce (reidentify, after a reload, has no nonce to check).
func (j *jwtAuth) authenticate(cr credentials, nonce string, checkSig bool) (*identity, *authFailure) {
	if cr.JWT == "" {
		return nil, &authFailure{user: cr.User, reason: "no user JWT"}
	}
	if len(cr.JWT) > maxJWTLen {
		return nil, &authFailure{reason: "user JWT too long"}
	}
	uc, err := jwt.DecodeUserClaims(cr.JWT)
	if err != nil {
		return nil, &authFailure{reason: "user JWT not valid: " + err.Error()}
	}
	user := uc.Subject
	if p := claimsProblem(uc); p != "" {
		return nil, &authFailure{user: user, reason: "user JWT not valid: " + p}
	}
	now := j.now().Unix()
	switch {
	case uc.Expires > 0 && now >= uc.Expires:
		return nil, &authFailure{user: user, reason: "user JWT expired"}
	case uc.NotBefore > 0 && now < uc.NotBefore:
		return nil, &authFailure{user: user, reason: "user JWT not yet valid"}
	}
	accKey := uc.Issuer
	if uc.IssuerAccount != "" {
		accKey = uc.IssuerAccount
	}
	ac := j.trust.accounts[accKey]
	acc := j.accounts[accKey]
	if ac == nil || acc == nil {
		return nil, &authFailure{user: user, reason: "account " + accKey + " not found"}
	}
	if ac.Expires > 0 && now >= ac.Expires {
		return nil, &authFailure{user: user, reason: "account " + accKey + " JWT expired"}
	}
	limits := uc.UserPermissionLimits
	if uc.Issuer != ac.Subject {
		scope, ok := ac.SigningKeys.GetScope(uc.Issuer)
		if !ok {
			return nil, &authFailure{user: user, reason: "signed by " + uc.Issuer + ", neither account " + accKey + " nor one of its signing keys"}
		}
		if us, scoped := scope.(*jwt.UserScope); scoped && us != nil {
			// A scoped signing key's template replaces what the user
			// JWT says it may do; such a JWT may say nothing itself.
			if err := us.ValidateScopedSigner(uc); err != nil {
				return nil, &authFailure{user: user, reason: "scoped signing key: " + err.Error()}
			}
			limits = us.Template
		}
	} else if uc.IssuerAccount != "" && uc.IssuerAccount != uc.Issuer {
		return nil, &authFailure{user: user, reason: "issuer_account does not match the issuer"}
	} else if j.trust.strictSigners[ac.Issuer] {
		// Under the operator's strict_signing_key_usage the account's
		// own key signs no users, as in the reference.
		return nil, &authFailure{user: user, reason: "signed by account " + accKey + "'s own key; its operator requires a signing key"}
	}
	if ac.IsClaimRevoked(uc) {
		return nil, &authFailure{user: user, reason: "user JWT revoked"}
	}
	if checkSig && !limits.BearerToken {
		if reason := verifyNonce(user, cr.Sig, nonce); reason != "" {
			return nil, &authFailure{user: user, reason: reason}
		}
	}
	if reason := unenforced(limits); reason != "" {
		return nil, &authFailure{user: user, reason: reason}
	}
	window, err := compileUserWindow(limits.UserLimits)
	if err != nil {
		return nil, &authFailure{user: user, reason: err.Error()}
	}
	id := &identity{name: user, acc: acc, nkey: user, secret: cr.JWT, fromJWT: true, window: window,
		issuer: uc.Issuer, bearer: limits.BearerToken,
		maxSubs: jwtLimit(limits.Subs), maxPayload: jwtLimit(limits.Payload)}
	if uc.Expires > 0 {
		id.expires = time.Unix(uc.Expires, 0)
	}
	id.perms = compilePermissions(permissionsFromClaims(limits.Permissions))
	if id.perms == nil {
		id.perms = compilePermissions(permissionsFromClaims(ac.DefaultPermissions))
	}
	if id.connTypes, err = compileConnTypes(limits.AllowedConnectionTypes); err != nil {
		return nil, &authFailure{user: user, reason: err.Error()}
	}
	return id, nil
}

// now is the authenticator's clock: the JWT checks' (jwtAuth.now), by
// which a user JWT's times are checked too.
func (a *authenticator) now() time.Time {
	if a.jwt != nil {
		return a.jwt.now()
	}
	return time.Now()
}

// maxJWTLen bounds the user JWT bus decodes: far above what nsc writes,
// far below what could cost much to decode.
const maxJWTLen = 64 << 10

// unenforced is why bus refuses a user whose JWT asks for limits it does
// not enforce yet, or "": letting such a user in unrestricted would be
// wrong in the permissive direction.
func unenforced(l jwt.UserPermissionLimits) string {
	switch {
	case l.Data > 0:
		return "bus does not enforce the user JWT's data limit"
	case l.ProxyRequired:
		return "bus does not take connections through proxies"
	}
	return ""
}

// reidentify is old's identity under j after a reload, or nil when
// its JWT no longer lets it in (its account gone, the user revoked).
func (j *jwtAuth) reidentify(old *identity) *identity {
	id, fail := j.authenticate(credentials{JWT: old.secret}, "", false)
	if fail != nil {
		return nil
	}
	return id
}

// errUserExpired is the reference's error for a connection whose user
// JWT expired while it was connected.
const errUserExpired = "User Authentication Expired"

// armExpiry closes c when its user JWT expires or the times range it
// connected in (at now, by the authenticator's clock) ends, whichever
// comes first, as the reference does (with the same error for both); a
// later CONNECT rearms it, and a reload leaves it armed (the user JWT
// is the same). One timer per connection, stopped as it closes.
func (c *conn) armExpiry(id *identity, now time.Time) {
	deadline := id.expires
	if end := id.window.closesAt(now); !end.IsZero() && (deadline.IsZero() || end.Before(deadline)) {
		deadline = end
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expiryTimer != nil {
		c.expiryTimer.Stop()
		c.expiryTimer = nil
	}
	if deadline.IsZero() || c.subs == nil {
		return
	}
	c.expiryTimer = time.AfterFunc(deadline.Sub(now), func() {
		c.log.Info("user JWT expired or its times ended", "user", id.name)
		c.closeWithErr(errUserExpired, "Authentication Expired")
	})
}
