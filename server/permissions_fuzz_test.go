package server

import (
	"strings"
	"testing"

	"github.com/bus-dev/bus/subjects"
)

// FuzzPermissionEntries feeds arbitrary allow and deny entries (comma
// separated) and an arbitrary subscription and message. Oracle: invalid
// entries are refused by validate, never compiled into something that
// panics; and a message that reaches an allowed subscription matches no
// deny entry that applies to it.
func FuzzPermissionEntries(f *testing.F) {
	f.Add("orders.>,jobs.> workers", "orders.secret,jobs.urgent workers", "orders.*", "", "orders.secret")
	f.Add("a.*", "", "a.>", "", "a.b.c")
	f.Add("", "foo.*", "foo.>", "q", "foo.bar")
	f.Add(">", "x q.*", "x", "q.1", "x")
	f.Add("a..b", "", "a", "", "a")
	f.Add("a b c", "", "a", "b", "a")
	f.Fuzz(func(t *testing.T, allow, deny, subject, queue, msg string) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		p := &Permissions{
			Publish:   &SubjectPermission{Allow: split(allow), Deny: split(deny)},
			Subscribe: &SubjectPermission{Allow: split(allow), Deny: split(deny)},
		}
		if p.validate() != nil {
			return
		}
		perms := compilePermissions(p)
		_ = perms.canPublish(msg)
		id := &identity{perms: perms}
		_ = id.MayRead(subject)
		_ = id.MayPublish(msg)
		if !perms.canSubscribe(subject, queue) || !subjects.Matches(subject, msg) {
			return
		}
		if perms.needsDeliveryFilter(subject, queue) && perms.deniedDelivery([]byte(msg), queue) {
			return
		}
		for _, e := range perms.subDeny {
			if subjects.Matches(e.subject, msg) && (e.queue == "" || queue != "" && queueMatches(queue, e.queue)) {
				t.Fatalf("SUB %q %q receives %q, denied by %+v", subject, queue, msg, e)
			}
		}
	})
}

// FuzzMatchValid: for valid patterns, matchValid agrees with
// subjects.Matches on any subject.
func FuzzMatchValid(f *testing.F) {
	for _, s := range [][2]string{{"a.*", "a.b"}, {"a.>", "a.b.c"}, {">", "a..b"}, {"a.>", "a."}, {"*", ""}, {"a.b", "a.b."}, {"a.*.c", "a.*.c"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		if !subjects.ValidSubject(pattern) {
			return
		}
		if got, want := matchValid(pattern, subject), subjects.Matches(pattern, subject); got != want {
			t.Fatalf("matchValid(%q, %q) = %v, subjects.Matches %v", pattern, subject, got, want)
		}
	})
}
