package tests

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/subjects"
)

// step is one turn of a multi-connection script: conn sends in, then a
// PING, and the answer up to the PONG is recorded.
type step struct {
	conn int
	in   string
	// wait is slept before the step: the delay a test measures, such as
	// a permission's expiry.
	wait time.Duration
}

// runScript plays steps over conns connections to addr and returns what
// each step got back, INFO lines dropped and MSG runs sorted.
func runScript(t *testing.T, addr string, conns int, steps []step) []string {
	t.Helper()
	ncs := make([]net.Conn, conns)
	rs := make([]*bufio.Reader, conns)
	for i := range ncs {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		ncs[i], rs[i] = nc, bufio.NewReader(nc)
	}
	out := make([]string, len(steps))
	for i, st := range steps {
		time.Sleep(st.wait)
		if _, err := ncs[st.conn].Write([]byte(st.in + "PING\r\n")); err != nil {
			out[i] = "<write failed>"
			continue
		}
		out[i] = normalizeFrames(readUntilPong(t, ncs[st.conn], rs[st.conn]))
	}
	return out
}

func compareScripts(t *testing.T, pair authPair, conns int, steps []step) {
	t.Helper()
	got := runScript(t, pair.bus, conns, steps)
	want := runScript(t, pair.ref, conns, steps)
	for i := range steps {
		if got[i] != want[i] {
			t.Errorf("step %d (conn %d) %q:\n  bus: %q\n  ref: %q", i, steps[i].conn, clip(steps[i].in), got[i], want[i])
		}
	}
}

// Publish, subscribe and queue-subscribe violations, and the delivery
// filter, answer as in the reference, and the connection stays open.
func TestPermissionViolationsMatchReference(t *testing.T) {
	t.Parallel()
	pair := startAuthPair(t, server.Authorization{Users: []server.User{
		{Name: "u", Password: "p", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"orders.>", "jobs.*"}, Deny: []string{"orders.secret", "orders.*.admin"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"orders.>", "jobs.> workers", "_INBOX.>"}, Deny: []string{"orders.secret", "jobs.urgent workers"}},
		}},
		{Name: "pub", Password: "p"},
	}})
	u, pub := connectWith(`"user":"u","pass":"p"`), connectWith(`"user":"pub","pass":"p"`)
	compareScripts(t, pair, 2, []step{
		{conn: 0, in: u + "SUB orders.* 1\r\nSUB orders.> 2\r\nSUB orders.secret 3\r\nSUB payroll.x 4\r\nSUB foo..bar 5\r\n"},
		{conn: 0, in: "SUB jobs.x workers 6\r\nSUB jobs.x others 7\r\nSUB jobs.x 8\r\nSUB jobs.urgent workers 9\r\n"},
		{conn: 1, in: pub + "PUB orders.eu 1\r\na\r\nPUB orders.secret 1\r\nb\r\nPUB jobs.x 1\r\nc\r\nPUB jobs.urgent 1\r\nd\r\nPUB payroll.x 1\r\ne\r\n"},
		{conn: 0},
		// A wildcard queue subscription overlapping a queue deny entry:
		// the denied subject is filtered at delivery for that group.
		{conn: 0, in: "UNSUB 6\r\nSUB jobs.* workers 10\r\n"},
		{conn: 1, in: "PUB jobs.urgent 1\r\nd\r\nPUB jobs.y 1\r\ne\r\n"},
		{conn: 0},
		{conn: 0, in: "PUB orders.eu 1\r\nf\r\nPUB orders.secret 1\r\ng\r\nPUB orders.x.admin 1\r\nh\r\nPUB jobs.a.b 1\r\ni\r\nPUB payroll 1\r\nj\r\n"},
		{conn: 0, in: "PUB orders.* 1\r\nk\r\nPUB orders.> 1\r\nl\r\nPUB jobs.> 1\r\nm\r\n"},
		{conn: 0, in: `CONNECT {"verbose":true,"user":"u","pass":"p"}` + "\r\nPUB payroll 1\r\nn\r\nSUB payroll 11\r\nPUB orders.a 1\r\no\r\n"},
	})
}

// allow_responses lets a service with no publish rights answer each
// request it got, max times, and nothing else, as in the reference.
func TestAllowResponsesMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rp   *server.ResponsePermission
	}{
		{"default one reply", &server.ResponsePermission{}},
		{"max two", &server.ResponsePermission{MaxMsgs: 2}},
		{"expired", &server.ResponsePermission{Expires: time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pair := startAuthPair(t, server.Authorization{Users: []server.User{
				{Name: "svc", Password: "p", Permissions: &server.Permissions{Responses: tc.rp}},
				{Name: "cli", Password: "p"},
			}})
			svc, cli := connectWith(`"user":"svc","pass":"p"`), connectWith(`"user":"cli","pass":"p"`)
			steps := []step{
				{conn: 0, in: svc + "SUB svc 1\r\nPUB anything 1\r\nx\r\n"},
				{conn: 1, in: cli + "SUB _INBOX.r.* 1\r\nPUB svc _INBOX.r.1 1\r\nq\r\nPUB svc _INBOX.r.2 1\r\nq\r\n"},
				{conn: 0},
				{conn: 0, wait: 10 * tc.rp.Expires, // past the grant's expiry, if it has one
					in: "PUB _INBOX.r.1 1\r\na\r\nPUB _INBOX.r.1 1\r\nb\r\nPUB _INBOX.r.1 1\r\nc\r\nPUB _INBOX.r.3 1\r\nd\r\nPUB _INBOX.r.2 1\r\ne\r\n"},
				{conn: 1},
			}
			compareScripts(t, pair, 2, steps)
		})
	}
}

// The same random permission sets and operations as the server's model
// test, against the reference: every decision bus makes equals the
// reference's, except the one documented difference: bus refuses a SUB
// that an allow entry matches only as a pattern without containing it
// (allow "a.*" does not admit SUB "a.>").
func TestRandomPermissionsMatchReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 3))
	const users = 150
	auth := server.Authorization{}
	perms := make([]*server.Permissions, users)
	for i := range users {
		perms[i] = randomPerms(r)
		auth.Users = append(auth.Users, server.User{Name: fmt.Sprint("u", i), Password: "p", Permissions: perms[i]})
	}
	pair := startAuthPair(t, auth)
	baseBus, baseRef := pair.subs() // the servers' own
	stricter := 0
	defer func() { t.Logf("%d of %d users saw bus refuse a SUB the reference admits by pattern", stricter, users) }()
	for i := range users {
		var sb strings.Builder
		sb.WriteString(connectWith(fmt.Sprintf(`"user":"u%d","pass":"p"`, i)))
		type sub struct {
			subject, queue string
			sid            int
		}
		var subs []sub
		seen := map[string]bool{}
		for k := range 6 {
			s := sub{randomPerm(r), []string{"", "", "q1", "q2"}[r.IntN(4)], k + 1}
			// One member per queue name (the reference has one group
			// per name), so that delivery is not a random pick.
			if s.queue != "" && seen[s.queue] {
				continue
			}
			seen[s.queue] = true
			subs = append(subs, s)
			fmt.Fprintf(&sb, "SUB %s %s %d\r\n", s.subject, s.queue, k+1)
		}
		for range 6 {
			fmt.Fprintf(&sb, "PUB %s 1\r\nx\r\n", randomLiteral(r))
		}
		in := sb.String()
		got := normalizeFrames(exchange(t, pair.bus, in))
		want := normalizeFrames(exchange(t, pair.ref, in))
		// The next user must not find this one's queue members, which
		// go with its connection asynchronously.
		eventually(t, 5*time.Second, func() bool { b, r := pair.subs(); return b == baseBus && r == baseRef })
		if got == want {
			continue
		}
		// Allowed difference: SUBs the reference admits by the pattern
		// match that bus refuses for not being inside an allow entry.
		// Drop their lines from both and compare the rest.
		quirk := func(s sub) bool {
			p := perms[i].Subscribe
			if p == nil || len(p.Allow) == 0 {
				return false
			}
			for _, a := range p.Allow {
				f := strings.Fields(a)
				if (len(f) == 1 || s.queue == f[1]) && subjects.Within(s.subject, f[0]) {
					return false // contained: bus decides as the reference
				}
			}
			return true
		}
		var quirky []string
		for _, s := range subs {
			if quirk(s) {
				quirky = append(quirky, fmt.Sprint(s.sid))
			}
		}
		stricter++
		if len(quirky) == 0 || !onlyQuirkDiffers(got, want, quirky) {
			t.Errorf("user %d (%+v %+v):\ninput %q\n  bus: %q\n  ref: %q", i, perms[i].Publish, perms[i].Subscribe, in, got, want)
		}
	}
}

// onlyQuirkDiffers reports whether got and want are equal once MSG frames
// for the sids in quirky, and bus's violations for them, are removed.
func onlyQuirkDiffers(got, want string, quirky []string) bool {
	drop := func(s string, dropErrs bool) string {
		var keep []string
		lines := strings.SplitAfter(s, "\r\n")
		for i := 0; i < len(lines); i++ {
			f := strings.Fields(lines[i])
			if len(f) >= 3 && f[0] == "MSG" && contains(quirky, f[2]) {
				i++ // and the payload
				continue
			}
			if dropErrs && strings.HasPrefix(lines[i], "-ERR 'Permissions Violation for Subscription") {
				continue
			}
			keep = append(keep, lines[i])
		}
		return strings.Join(keep, "")
	}
	return drop(got, true) == drop(want, true)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// randomPerm makes a pattern of 1..3 tokens from a, b, * and a final >.
func randomPerm(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	toks := make([]string, n)
	for i := range toks {
		toks[i] = []string{"a", "b", "*"}[r.IntN(3)]
	}
	if r.IntN(3) == 0 {
		toks[n-1] = ">"
	}
	return strings.Join(toks, ".")
}

func randomLiteral(r *rand.Rand) string {
	n := 1 + r.IntN(4)
	toks := make([]string, n)
	for i := range toks {
		toks[i] = []string{"a", "b", "z", "*"}[r.IntN(4)]
	}
	return strings.Join(toks, ".")
}

func randomPermList(r *rand.Rand, queues bool) []string {
	n := r.IntN(4)
	if n == 0 && r.IntN(2) == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = randomPerm(r)
		if queues && r.IntN(3) == 0 {
			out[i] += " " + []string{"q1", "q2", "q*"}[r.IntN(3)]
		}
	}
	return out
}

func randomPerms(r *rand.Rand) *server.Permissions {
	p := &server.Permissions{}
	if r.IntN(4) != 0 {
		p.Publish = &server.SubjectPermission{Allow: randomPermList(r, false), Deny: randomPermList(r, false)}
	}
	if r.IntN(4) != 0 {
		p.Subscribe = &server.SubjectPermission{Allow: randomPermList(r, true), Deny: randomPermList(r, true)}
	}
	return p
}
