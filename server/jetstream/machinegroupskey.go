package jetstream

import (
	"strings"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// groupBy is a consumer's x_bus_group_by: what puts its messages into
// groups, each delivered in store order one message at a time (see
// machinegroups.go). Exactly one field is set.
type groupBy struct {
	// Header names the header whose value is the group key.
	Header string `json:"header,omitempty"`
	// Token is the position of the subject token that is the group key:
	// 1 is the first, as in subject wildcards; -1 the last.
	Token int `json:"token,omitempty"`
}

// errCodeGroupBy is bus's own err_code for a consumer config
// x_bus_group_by refuses (docs/api.md); the reference has no such error.
const errCodeGroupBy = 10400

// Bounds of x_bus_group_by's config.
const (
	maxGroupHeader = 256 // bytes of a header name
	maxGroupToken  = 256 // |token|
	// maxGroupWait bounds ack_wait, back-off steps and NAK delays, so no
	// deadline a client can cause looks like a tombstone's.
	maxGroupWait = 10 * 365 * 24 * time.Hour
)

func errGroupBy(format string, args ...any) *apiError {
	return newAPIError(400, errCodeGroupBy, format, args...)
}

// checkGroupBy validates x_bus_group_by against the rest of a normalized
// config: a group's order needs explicit acks.
func (c *consumerConfig) checkGroupBy() *apiError {
	g := c.GroupBy
	if g == nil {
		return nil
	}
	switch {
	case (g.Header == "") == (g.Token == 0):
		return errGroupBy(`x_bus_group_by needs exactly one of "header" (a header name) or "token" (a subject token position)`)
	case g.Header != "" && !validHeaderName(g.Header):
		return errGroupBy("x_bus_group_by header %q is not a valid header name", g.Header)
	case g.Token > maxGroupToken || g.Token < -maxGroupToken:
		return errGroupBy("x_bus_group_by token %d is out of range: 1 is the first subject token, -1 the last, at most %d either way", g.Token, maxGroupToken)
	case c.AckPolicy != AckExplicit:
		return errGroupBy("x_bus_group_by requires ack_policy explicit")
	case time.Duration(c.AckWait) > maxGroupWait:
		return errGroupBy("x_bus_group_by allows an ack_wait of at most %v", maxGroupWait)
	}
	for _, b := range c.BackOff {
		if time.Duration(b) > maxGroupWait {
			return errGroupBy("x_bus_group_by allows backoff steps of at most %v", maxGroupWait)
		}
	}
	return nil
}

// validHeaderName reports whether name is an HTTP-style field name:
// printable ASCII without ':' or spaces, as NATS headers are written.
func validHeaderName(name string) bool {
	if name == "" || len(name) > maxGroupHeader {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c >= 0x7f || c == ':' {
			return false
		}
	}
	return true
}

// sameGroupBy reports whether two configs group alike. A consumer's
// grouping cannot change: its held-back messages are known only under
// the grouping that held them back.
func sameGroupBy(a, b *groupBy) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// headerKey returns msg's group key by header, aliasing msg.Header; nil
// when the header is missing or empty (the message has no group).
func (g *groupBy) headerKey(msg jetlog.Msg) []byte {
	return header.Value(msg.Header, g.Header)
}

// tokenKey returns msg's group key by subject token, a substring of
// msg.Subject; ok is false when the subject has too few tokens.
func (g *groupBy) tokenKey(msg jetlog.Msg) (string, bool) {
	return subjectToken(msg.Subject, g.Token)
}

// subjectToken returns the pos'th token of subject (1-based; negative
// counts from the end, -1 is the last) without allocating.
func subjectToken(subject string, pos int) (string, bool) {
	if pos < 0 {
		for end := len(subject); ; {
			start := strings.LastIndexByte(subject[:end], '.') + 1
			if pos++; pos == 0 {
				return subject[start:end], true
			}
			if start == 0 {
				return "", false
			}
			end = start - 1
		}
	}
	for start := 0; ; {
		end := strings.IndexByte(subject[start:], '.')
		if end < 0 {
			end = len(subject)
		} else {
			end += start
		}
		if pos--; pos == 0 {
			return subject[start:end], true
		}
		if end == len(subject) {
			return "", false
		}
		start = end + 1
	}
}
