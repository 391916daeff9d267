package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/bus-dev/bus/subjects"
)

// DefaultSystemAccount is the reference's name for the system account
// when system_account does not name one.
const DefaultSystemAccount = "$SYS"

// SystemAccount is the system account: the users who may make the
// monitoring requests ($SYS.REQ.SERVER.…, sysreq.go). As in the
// reference, its users live in a subject space of their own: they see
// none of the other users' messages and those see none of theirs, and
// they have no JetStream. The zero value has no system account: nobody
// gets an answer on $SYS.REQ.SERVER.…
//
// The other accounts are Options.Accounts (account.go); every user of
// Authorization is in the global account.
type SystemAccount struct {
	// Name is how monitoring names the account; "" means
	// DefaultSystemAccount.
	Name string
	// Users authenticate as Authorization's users do (a name and
	// password, or an nkey) and may have permissions, which apply inside
	// the system account. Their names must differ from Authorization's.
	Users []User
}

func (a SystemAccount) name() string {
	if a.Name == "" {
		return DefaultSystemAccount
	}
	return a.Name
}

// validate checks the users as Authorization.validate does, and that no
// name is also a user of auth.
func (a SystemAccount) validate(auth Authorization) error {
	taken := map[string]bool{}
	for _, u := range auth.Users {
		taken[u.label()] = true
	}
	if auth.User != "" {
		taken[auth.User] = true
	}
	for i, u := range a.Users {
		if err := u.validate(); err != nil {
			return fmt.Errorf("server: system account users[%d]: %w", i, err)
		}
		if taken[u.label()] {
			return fmt.Errorf("server: system account users[%d]: duplicate user %q", i, u.label())
		}
		taken[u.label()] = true
	}
	return nil
}

// authenticateSystem checks cr against the system users kept apart from
// a token or single user. It reports whether cr named one of them; if
// not, the caller goes on with the other credentials.
func (au *authenticator) authenticateSystem(cr credentials, nonce string) (*identity, *authFailure, bool) {
	if cr.Nkey != "" {
		if e := au.sysNkeys[cr.Nkey]; e != nil {
			if reason := verifyNonce(cr.Nkey, cr.Sig, nonce); reason != "" {
				return nil, &authFailure{user: cr.Nkey, reason: reason}, true
			}
			return e.id, nil, true
		}
	}
	e := au.sysUsers[cr.User]
	if cr.User == "" || e == nil {
		return nil, nil, false
	}
	if !passwordMatches(e.password, cr.Pass) {
		return nil, &authFailure{user: cr.User, reason: "wrong password"}, true
	}
	return e.id, nil, true
}

// accountName is how monitoring names c's account: "" for the global
// one, which the reference leaves out of /connz. c.mu is held.
func (c *conn) accountName() string {
	if c.acc == c.srv.global {
		return ""
	}
	return c.acc.name
}

// lockedAccountName is accountName for callers not holding c.mu.
func (c *conn) lockedAccountName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.accountName()
}

// hasSystemAccount reports whether name is the configured system
// account's.
func (s *Server) hasSystemAccount(name string) bool {
	return s.opts.hasSystemUsers() && name == s.opts.SystemAccount.name()
}

// accountSelected reports whether a connection of account (""
// for the global one) is among those a monitoring filter on want ("" for
// all) selects.
func accountSelected(want, account string) bool {
	switch want {
	case "":
		return true
	case globalAccount:
		return account == ""
	}
	return want == account
}

// UserInfo is the answer to $SYS.REQ.USER.INFO: who the requester is, in
// which account, with what permissions (the reference's shape).
type UserInfo struct {
	User        string          `json:"user"`
	Account     string          `json:"account"`
	AccountName string          `json:"account_name,omitempty"`
	Permissions *UserPermission `json:"permissions,omitempty"`
}

// UserPermission is a user's permissions as the reference reports them.
type UserPermission struct {
	Publish   *SubjectPermissionInfo `json:"publish,omitempty"`
	Subscribe *SubjectPermissionInfo `json:"subscribe,omitempty"`
	Responses *ResponseInfo          `json:"responses,omitempty"`
}

// SubjectPermissionInfo is an allow and a deny list.
type SubjectPermissionInfo struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// ResponseInfo is allow_responses: at most max replies within ttl.
type ResponseInfo struct {
	MaxMsgs int           `json:"max"`
	Expires time.Duration `json:"ttl"`
}

// userInfo describes id for $SYS.REQ.USER.INFO.
func (s *Server) userInfo(id *identity) UserInfo {
	account := s.accountFor(id).name
	return UserInfo{User: id.name, Account: account, AccountName: account, Permissions: id.perms.public()}
}

// public is p as the reference reports it, nil for no permissions.
func (p *permissions) public() *UserPermission {
	if p == nil {
		return nil
	}
	entries := func(list []permEntry) []string {
		var out []string
		for _, e := range list {
			out = append(out, strings.TrimSpace(e.subject+" "+e.queue))
		}
		return out
	}
	out := &UserPermission{}
	if p.pubLimited || len(p.pubDeny) > 0 {
		out.Publish = &SubjectPermissionInfo{Allow: p.pubAllow, Deny: p.pubDeny}
	}
	if len(p.subAllow) > 0 || len(p.subDeny) > 0 {
		out.Subscribe = &SubjectPermissionInfo{Allow: entries(p.subAllow), Deny: entries(p.subDeny)}
	}
	if r := p.responses; r != nil {
		out.Responses = &ResponseInfo{MaxMsgs: r.MaxMsgs, Expires: r.Expires}
	}
	return out
}

// sysUserInfo answers $SYS.REQ.USER.INFO in trie's subject space, with
// the requester's own identity.
func (s *Server) sysUserInfo(trie *subjects.Trie[*subscription]) RequestHandler {
	return func(r Rights, _, reply []byte, _ int, _ []byte) bool {
		if len(reply) == 0 {
			return true
		}
		id, ok := r.(*identity)
		if !ok {
			id = &identity{}
		}
		s.sysReply(trie, reply, sysResponse{Server: s.envelope(), Data: s.userInfo(id)})
		return true
	}
}
