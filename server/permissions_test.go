package server

import (
	"fmt"
	"testing"
)

// permFixture is a route fixture whose connections all authenticated as
// a user with perms, before subscribing.
func permFixture(tb testing.TB, perms *Permissions, subscribers int, patterns ...string) *routeFixture {
	tb.Helper()
	srv, err := New(Options{Authorization: Authorization{Users: []User{{Name: "u", Permissions: perms}}}})
	if err != nil {
		tb.Fatal(err)
	}
	id, fail := srv.auth().authenticate(credentials{User: "u"}, "", nil)
	if fail != nil {
		tb.Fatal(fail.reason)
	}
	f := &routeFixture{srv: srv, pub: pipeConn(tb, srv, 0)}
	f.pub.becomeUser(id)
	for i := range subscribers {
		c := pipeConn(tb, srv, uint64(i+1))
		c.becomeUser(id)
		for k, p := range patterns {
			if err := c.processSub(&op{kind: opSub, subject: []byte(p), sid: []byte(fmt.Sprint(k + 1))}); err != nil {
				tb.Fatal(err)
			}
		}
		f.subs = append(f.subs, c)
	}
	return f
}

// A user with publish rules and wildcard subscriptions filtered at
// delivery still publishes without allocating, once the decision for a
// subject is cached.
func TestPermissionedPublishAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	perms := &Permissions{
		Publish:   &SubjectPermission{Allow: []string{"orders.>"}, Deny: []string{"orders.secret"}},
		Subscribe: &SubjectPermission{Deny: []string{"orders.secret"}},
	}
	f := permFixture(t, perms, 2, "orders.*", "orders.>")
	if !f.subs[0].subs["1"].rights.Load().filtered {
		t.Fatal("orders.* overlaps the deny entry but is not filtered")
	}
	subject, payload := []byte("orders.eu"), []byte("hello")
	run := func() {
		if !f.pub.pubAllowed(subject) {
			t.Fatal("publish refused")
		}
		if n := f.pub.publish(subject, nil, -1, payload); n != 4 {
			t.Fatalf("delivered to %d subscriptions", n)
		}
		f.pub.wakeWriters()
		f.drainOutbound()
	}
	run()
	if allocs := testing.AllocsPerRun(1000, run); allocs != 0 {
		t.Fatalf("permissioned publish allocates %.1f times per message, want 0", allocs)
	}
}

// The delivery-time filter keeps a denied subject from wildcard
// subscriptions that overlap it, while others get it.
func TestDeliveryFilterDropsDeniedSubjects(t *testing.T) {
	t.Parallel()
	perms := &Permissions{Subscribe: &SubjectPermission{Deny: []string{"orders.secret", "jobs.x q1"}}}
	f := permFixture(t, perms, 1, "orders.*", "orders.>", ">")
	if n := f.pub.publish([]byte("orders.secret"), nil, -1, []byte("x")); n != 0 {
		t.Errorf("orders.secret reached %d subscriptions, want 0", n)
	}
	if n := f.pub.publish([]byte("orders.public"), nil, -1, []byte("x")); n != 3 {
		t.Errorf("orders.public reached %d subscriptions, want 3", n)
	}
	c := f.subs[0]
	if err := c.processSub(&op{kind: opSub, subject: []byte("jobs.*"), queue: []byte("q1"), sid: []byte("9")}); err != nil {
		t.Fatal(err)
	}
	if err := c.processSub(&op{kind: opSub, subject: []byte("jobs.*"), queue: []byte("q2"), sid: []byte("10")}); err != nil {
		t.Fatal(err)
	}
	// ">" and the q2 group get jobs.x; the q1 group may not.
	if n := f.pub.publish([]byte("jobs.x"), nil, -1, []byte("x")); n != 2 {
		t.Errorf("jobs.x reached %d subscriptions, want 2", n)
	}
}

// Under allow_responses a user may publish to the reply subject of a
// request it received, only as often as max says, and only to that.
func TestAllowResponsesGrantsOnlyReceivedReplies(t *testing.T) {
	t.Parallel()
	perms := &Permissions{Publish: &SubjectPermission{Allow: []string{}}, Responses: &ResponsePermission{MaxMsgs: 2}}
	f := permFixture(t, perms, 1, "svc")
	svc := f.subs[0]
	if svc.pubAllowed([]byte("_INBOX.r1")) {
		t.Fatal("reply allowed before any request")
	}
	f.pub.publish([]byte("svc"), []byte("_INBOX.r1"), -1, []byte("q"))
	for i, want := range []bool{true, true, false} {
		if got := svc.pubAllowed([]byte("_INBOX.r1")); got != want {
			t.Errorf("reply %d allowed %v, want %v", i+1, got, want)
		}
	}
	if svc.pubAllowed([]byte("_INBOX.r2")) || svc.pubAllowed([]byte("svc")) {
		t.Error("allow_responses let something else through")
	}
}

// A user may not read a stored message through an inbox unless it may
// subscribe to the message's own subject; ReferenceStoredReads turns the
// check off.
func TestStoredDeliveryChecksTheMessageSubject(t *testing.T) {
	t.Parallel()
	perms := &Permissions{Subscribe: &SubjectPermission{Allow: []string{"_INBOX.>", "orders.>"}, Deny: []string{"orders.secret"}}}
	for _, reference := range []bool{false, true} {
		f := permFixture(t, perms, 1, "_INBOX.c1")
		f.srv.opts.Authorization.ReferenceStoredReads = reference
		deliver := func(subject string) int {
			return f.srv.route(nil, []byte("_INBOX.c1"), []byte(subject), nil, -1, []byte("x"))
		}
		want := map[string]int{"orders.eu": 1, "orders.secret": 0, "payroll.x": 0}
		if reference {
			want = map[string]int{"orders.eu": 1, "orders.secret": 1, "payroll.x": 1}
		}
		for subject, n := range want {
			if got := deliver(subject); got != n {
				t.Errorf("reference=%v: stored %s reached %d, want %d", reference, subject, got, n)
			}
		}
	}
}

// BenchmarkPermissionedPublish is BenchmarkPublishFanout for a user with
// publish rules and subscriptions filtered at delivery.
func BenchmarkPermissionedPublish(b *testing.B) {
	perms := &Permissions{
		Publish:   &SubjectPermission{Allow: []string{"bench.>"}, Deny: []string{"bench.secret"}},
		Subscribe: &SubjectPermission{Deny: []string{"bench.secret"}},
	}
	for _, fanout := range []int{1, 10} {
		b.Run(fmt.Sprintf("subs=%d/size=16", fanout), func(b *testing.B) {
			f := permFixture(b, perms, fanout, "bench.*")
			subject, payload := []byte("bench.subject"), make([]byte, 16)
			b.ReportAllocs()
			b.SetBytes(int64(16 * fanout))
			i := 0
			for b.Loop() {
				if f.pub.pubAllowed(subject) {
					f.pub.publish(subject, nil, -1, payload)
				}
				if i++; i%64 == 0 {
					f.pub.wakeWriters()
					f.drainOutbound()
				}
			}
		})
	}
}
