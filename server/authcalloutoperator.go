package server

import (
	"fmt"
	"slices"

	"github.com/nats-io/jwt/v2"
)

// consultAccountCallout is the auth callout of operator mode: a user
// whose JWT authenticated it into an account whose JWT has an
// authorization block (auth_users, allowed_accounts, xkey) and who is
// not one of its auth_users is what the reference calls a sentinel: the
// account's callout service decides who the client really is. The
// request goes to $SYS.REQ.USER.AUTH in that account; the answer must be
// signed by the account or one of its signing keys, and its user JWT by
// the account, or by an account of allowed_accounts, which the client
// then joins, verified as any user JWT is (jwtauth.go).
//
// A client whose own JWT was refused stays refused (the reference also
// calls out for some of them); a user in the callout account may not
// publish authorization requests.
func (c *conn) consultAccountCallout(j *jwtAuth, cr credentials, o *connectOptions, id *identity, fail *authFailure) (*identity, *authFailure) {
	if id == nil || !id.fromJWT || id.acc == nil {
		return id, fail
	}
	accKey := id.acc.name
	ac := j.trust.accounts[accKey]
	if ac == nil || !ac.Authorization.IsEnabled() {
		return id, fail
	}
	ext := ac.Authorization
	if slices.Contains(ext.AuthUsers, id.nkey) {
		return denyAuthRequests(id), nil
	}
	signedBy := func(key string) bool { return key == accKey || ac.SigningKeys.Contains(key) }
	to := calloutTarget{acc: id.acc, requestSubject: accKey, xkey: ext.XKey, signedBy: signedBy, accountKey: accKey}
	refuse := func(err error) (*identity, *authFailure) {
		return nil, &authFailure{user: id.name, reason: titleCase(err.Error())}
	}
	uc, token, err := c.runCallout(to, cr, o)
	if err != nil {
		return refuse(err)
	}
	issuerAcc := uc.Issuer
	if uc.IssuerAccount != "" {
		issuerAcc = uc.IssuerAccount
	}
	if issuerAcc != accKey && !allowedAccount(ext, issuerAcc) {
		return refuse(fmt.Errorf("account %q not permitted as valid account option for auth callout for account %q", uc.Issuer, accKey))
	}
	got, gotFail := j.authenticate(credentials{JWT: token}, "", false)
	if gotFail != nil {
		return refuse(fmt.Errorf("auth callout user JWT: %s", gotFail.reason))
	}
	got.fromCallout = true
	if got.acc == id.acc {
		got = denyAuthRequests(got)
	}
	return got, nil
}

// allowedAccount reports whether the callout of ext may place users in
// the account key: one of allowed_accounts, or any with "*".
func allowedAccount(ext jwt.ExternalAuthorization, key string) bool {
	if len(ext.AllowedAccounts) == 1 && ext.AllowedAccounts[0] == jwt.AnyAccount {
		return true
	}
	return slices.Contains(ext.AllowedAccounts, key)
}
