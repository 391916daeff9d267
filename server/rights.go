package server

import (
	"slices"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/subjects"
)

// Rights is what a service running inside the server (JetStream) needs to
// know about the client behind a request it handles: who it is, and what
// that user may read and publish: the core's half of the seam for
// JetStream's permission checks (docs/security.md, "JetStream"), handed
// over by subscribeRequests. It is jetstream.Rights itself, the seam's
// type, so the core's values go to JetStream as they are. Values are
// immutable and safe for concurrent use. MayRead: every subject the filter matches
// is inside the user's subscribe allow list and overlaps no deny entry.
// MayPublish: as a PUB would be checked (allow_responses grants aside).
type Rights = jetstream.Rights

// RequestHandler receives a message on a server-owned subscription with
// the Rights of the client that published it (full rights for messages
// the server itself publishes). It runs on the publisher's reader
// goroutine, as msgHandler does.
type RequestHandler = jetstream.RequestHandler

// fullRights are the rights of the server itself and of every client
// when authorization is off. Immutable: an identity without permissions.
var fullRights Rights = &identity{}

// User implements Rights.
func (id *identity) User() string { return id.name }

// MayRead implements Rights.
func (id *identity) MayRead(filter string) bool {
	p := id.perms
	if p == nil {
		return true
	}
	if !subjects.ValidSubject(filter) || !p.canSubscribe(filter, "") {
		return false
	}
	for _, e := range p.subDeny {
		if e.queue == "" && subjects.Overlap(e.subject, filter) {
			return false
		}
	}
	return true
}

// MayPublish implements Rights. A literal subject is checked as a PUB
// would be; a pattern (what a transform or deliver subject may produce)
// only when an allow entry contains it and no deny entry overlaps it.
func (id *identity) MayPublish(subject string) bool {
	p := id.perms
	if p == nil || !p.hasPublishRules() {
		return true
	}
	if !hasWildcard(subject) {
		return p.canPublish(subject)
	}
	if !subjects.ValidSubject(subject) {
		return false
	}
	if p.pubLimited && !slices.ContainsFunc(p.pubAllow, func(allow string) bool { return subjects.Within(subject, allow) }) {
		return false
	}
	return !slices.ContainsFunc(p.pubDeny, func(deny string) bool { return subjects.Overlap(deny, subject) })
}

// UserRights implements jetstream.Core: the rights the user named user
// has now, for what the server does on an owner's behalf. "" is the
// operator (no user: authorization off, a token, or an asset made before
// owners were recorded), who may do anything; false means no such user
// is configured any more.
func (j jetstreamCore) UserRights(user string) (Rights, bool) {
	id, ok := j.s.auth().identityOf(user)
	if ws := j.s.wsAuthn.Load(); !ok && ws != nil {
		// The websocket block's own user (wsauth.go).
		id, ok = ws.identityOf(user)
	}
	if !ok || user != "" && !j.s.ownsUser(j.acc, id) {
		return nil, false // a user of another account (moved there by a reload)
	}
	return id, true
}

// identityOf is the identity configured for user (a name, or an nkey's
// public key), as an owner recorded it; see jetstreamCore.UserRights.
func (a *authenticator) identityOf(user string) (*identity, bool) {
	switch {
	case user == "" || !a.required:
		return fullRights.(*identity), true
	case a.users == nil:
		return a.single, a.single.name == user
	}
	if e := a.users[user]; e != nil {
		return e.id, true
	}
	if e := a.nkeys[user]; e != nil {
		return e.id, true
	}
	return nil, false
}

// rights are the Rights of the client publishing on c, or the server's
// when c is nil. Returning the identity itself costs no allocation.
func (c *conn) rights() Rights {
	if c == nil || c.user == nil {
		return fullRights
	}
	return c.user
}

// subscribeRequests registers a server-owned subscription in the global
// account whose messages go to h with the publisher's Rights.
func (s *Server) subscribeRequests(subject string, h RequestHandler) (*subscription, error) {
	return s.subscribeIn(s.global, &subscription{subject: subject, request: h})
}
