package server

import (
	"strings"
	"time"
	"unsafe"

	"github.com/bus-dev/bus/subjects"
)

// permEntry is one compiled subscribe entry: a pattern and, for entries
// written "subject queue", the queue group (itself possibly a pattern).
type permEntry struct {
	subject string
	queue   string // "" applies to every subscription
}

// permissions is a user's Permissions compiled for checking. It is
// immutable once built and shared by every connection of the user, so it
// is safe for concurrent use. A nil *permissions allows everything; the
// connections of users without permissions never reach these methods.
//
// Matching follows the reference's rules (see docs/security.md), with one
// deliberate difference: a subscription is allowed only when every
// subject it can receive is inside one allow entry that applies to it
// (subjects.Within), where the reference also lets "foo.*" admit a SUB to
// "foo.>", which then receives "foo.a.b".
type permissions struct {
	pubAllow  []string // patterns; meaningful only when pubLimited
	pubDeny   []string
	subAllow  []permEntry // empty allows every subject
	subDeny   []permEntry
	responses *ResponsePermission // nil: no allow_responses; fields normalised

	// pubLimited is set when an allow list exists, even an empty one:
	// then only what it matches may be published.
	pubLimited bool
}

// compilePermissions builds the checker for p, nil when p is nil. p was
// validated by Authorization.validate, so entries split cleanly.
func compilePermissions(p *Permissions) *permissions {
	if p == nil {
		return nil
	}
	perms := &permissions{}
	if p.Publish != nil {
		perms.pubLimited = p.Publish.Allow != nil
		perms.pubAllow = append([]string(nil), p.Publish.Allow...)
		perms.pubDeny = append([]string(nil), p.Publish.Deny...)
	}
	if p.Subscribe != nil {
		perms.subAllow = compileEntries(p.Subscribe.Allow)
		perms.subDeny = compileEntries(p.Subscribe.Deny)
	}
	if p.Responses != nil {
		r := *p.Responses
		if r.MaxMsgs == 0 {
			r.MaxMsgs = DefaultResponseMaxMsgs
		}
		if r.Expires == 0 {
			r.Expires = DefaultResponseExpires
		}
		perms.responses = &r
		// As in the reference, allow_responses without publish rights
		// allows publishing nothing but the responses.
		perms.pubLimited = true
	}
	return perms
}

func compileEntries(list []string) []permEntry {
	out := make([]permEntry, 0, len(list))
	for _, e := range list {
		subject, queue, err := splitPermEntry(e, true)
		if err != nil {
			continue // validated before; unreachable
		}
		out = append(out, permEntry{subject: subject, queue: queue})
	}
	return out
}

// hasPublishRules reports whether publishes need checking at all.
func (p *permissions) hasPublishRules() bool {
	return p.pubLimited || len(p.pubDeny) > 0
}

// canPublish reports whether subject (a literal, in which '*' and '>'
// tokens are plain characters) may be published to, before any
// allow_responses exception.
func (p *permissions) canPublish(subject string) bool {
	if p.pubLimited && !matchesAny(p.pubAllow, subject) {
		return false
	}
	return !matchesAny(p.pubDeny, subject)
}

func matchesAny(patterns []string, subject string) bool {
	for _, pat := range patterns {
		if matchValid(pat, subject) {
			return true
		}
	}
	return false
}

// canSubscribe reports whether a SUB to subject, in queue group queue
// ("" for none), is allowed.
//
// Allow, first the reference's rule: some plain entry matches the
// subscription's subject, except that when queue entries match it, a
// queue subscription must be in one of their groups instead. Then bus's
// own: an entry that applies to the subscription (plain, or for its
// group) must contain it, so that nothing it can receive is outside what
// was granted. Deny: a plain entry that matches the subscription's subject
// refuses it, a queue entry refuses only its groups. Subscriptions that a
// deny entry only partly overlaps are allowed and filtered at delivery
// (see needsDeliveryFilter).
func (p *permissions) canSubscribe(subject, queue string) bool {
	if len(p.subAllow) > 0 {
		plain, queueEntries, queueOK, contained := false, false, false, false
		for _, e := range p.subAllow {
			matches := matchValid(e.subject, subject)
			applies := e.queue == "" || queue != "" && queueMatches(queue, e.queue)
			if e.queue == "" {
				plain = plain || matches
			} else if matches {
				queueEntries = true
				queueOK = queueOK || applies
			}
			contained = contained || applies && subjects.Within(subject, e.subject)
		}
		allowed := plain
		if queue != "" && queueEntries {
			allowed = queueOK
		}
		if !allowed || !contained {
			return false
		}
	}
	for _, e := range p.subDeny {
		if matchValid(e.subject, subject) && (e.queue == "" || queue != "" && queueMatches(queue, e.queue)) {
			return false
		}
	}
	return true
}

// queueMatches reports whether group is named by pattern: equal, or
// inside it when pattern has wildcards.
func queueMatches(group, pattern string) bool {
	return group == pattern || hasWildcard(pattern) && subjects.Within(group, pattern)
}

func hasWildcard(pattern string) bool {
	for tok := range strings.SplitSeq(pattern, ".") {
		if tok == "*" || tok == ">" {
			return true
		}
	}
	return false
}

// needsDeliveryFilter reports whether an allowed subscription can still
// receive a message on a denied subject, so that each delivery to it must
// be checked (as the reference filters them): a wildcard or queue
// subscription overlapping a deny entry.
func (p *permissions) needsDeliveryFilter(subject, queue string) bool {
	if queue == "" && !hasWildcard(subject) {
		return false
	}
	for _, e := range p.subDeny {
		if subjects.Overlap(e.subject, subject) {
			return true
		}
	}
	return false
}

// deniedDelivery reports whether a message on subject may not reach a
// subscription in queue ("" for none). It does not allocate.
// see BenchmarkPublishFanout
func (p *permissions) deniedDelivery(subject []byte, queue string) bool {
	for _, e := range p.subDeny {
		if matchValid(e.subject, bytesView(subject)) && (e.queue == "" || queue != "" && queueMatches(queue, e.queue)) {
			return true
		}
	}
	return false
}

// matchValid is subjects.Matches for a pattern known to be valid (every
// compiled entry is), without validating it again on each delivery.
// see BenchmarkPermissionedPublish
func matchValid(pattern, subject string) bool {
	for {
		pt, prest, pmore := strings.Cut(pattern, ".")
		st, srest, smore := strings.Cut(subject, ".")
		switch {
		case st == "":
			return false // an empty token: the subject matches nothing
		case pt == ">":
			// The rest must be well formed: no empty token.
			return !smore || srest != "" && srest[0] != '.' && srest[len(srest)-1] != '.' && !strings.Contains(srest, "..")
		case pt != "*" && pt != st:
			return false
		case !pmore || !smore:
			return pmore == smore
		}
		pattern, subject = prest, srest
	}
}

// bytesView shows b as a string without copying, for checks that do not
// keep it.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// canReceiveStored reports whether a stored message on subject, shown to
// a subscription on another subject (a JetStream delivery to an inbox),
// may reach this user: the user must be allowed to subscribe to the
// message's own subject. The reference checks only the inbox.
func (p *permissions) canReceiveStored(subject []byte) bool {
	s := bytesView(subject)
	if len(p.subAllow) > 0 {
		ok := false
		for _, e := range p.subAllow {
			if e.queue == "" && matchValid(e.subject, s) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, e := range p.subDeny {
		if e.queue == "" && matchValid(e.subject, s) {
			return false
		}
	}
	return true
}

// responseExpiry is when a reply permission granted now lapses; the
// zero time when it never does.
func (p *permissions) responseExpiry(now time.Time) time.Time {
	if p.responses.Expires < 0 {
		return time.Time{}
	}
	return now.Add(p.responses.Expires)
}
