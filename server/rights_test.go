package server

import (
	"testing"
)

func TestRightsMayReadAndPublish(t *testing.T) {
	t.Parallel()
	id := &identity{name: "w", perms: compilePermissions(&Permissions{
		Publish:   &SubjectPermission{Allow: []string{"$JS.API.CONSUMER.MSG.NEXT.ORDERS.*", "dlq.>"}},
		Subscribe: &SubjectPermission{Allow: []string{"orders.>", "_INBOX.>"}, Deny: []string{"orders.secret"}},
	})}
	for _, tc := range []struct {
		filter string
		want   bool
	}{
		{"orders.eu", true},
		{"orders.*", false}, // overlaps the deny entry: a consumer would be fed what it may not see
		{"orders.>", false},
		{"orders.secret", false},
		{"orders.eu.>", true},
		{"payroll.>", false},
		{">", false},
		{"orders..x", false},
	} {
		if got := id.MayRead(tc.filter); got != tc.want {
			t.Errorf("MayRead(%q) = %v, want %v", tc.filter, got, tc.want)
		}
	}
	for subject, want := range map[string]bool{"$JS.API.CONSUMER.MSG.NEXT.ORDERS.w": true, "$JS.API.STREAM.DELETE.ORDERS": false, "dlq.orders": true} {
		if got := id.MayPublish(subject); got != want {
			t.Errorf("MayPublish(%q) = %v, want %v", subject, got, want)
		}
	}
	if !fullRights.MayRead(">") || !fullRights.MayPublish("x") || fullRights.User() != "" {
		t.Error("full rights refuse something")
	}
}

// A request handler learns the rights of the client that published, with
// no allocation for it.
func TestRequestHandlerGetsPublisherRights(t *testing.T) {
	perms := &Permissions{Subscribe: &SubjectPermission{Allow: []string{"a.>"}}}
	f := permFixture(t, perms, 0)
	var got Rights
	sub, err := f.srv.subscribeRequests("$JS.API.>", func(from Rights, _, _ []byte, _ int, _ []byte) bool {
		got = from
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.srv.unsubscribeInternal(sub)
	f.pub.publish([]byte("$JS.API.INFO"), []byte("_INBOX.r"), -1, nil)
	if got == nil || got.User() != "u" || got.MayRead("b") || !got.MayRead("a.b") {
		t.Fatalf("handler got rights %v", got)
	}
	f.srv.route(nil, []byte("$JS.API.INFO"), []byte("$JS.API.INFO"), nil, -1, nil)
	if got != fullRights {
		t.Errorf("server-originated request got %v, want full rights", got)
	}
	if raceEnabled {
		return
	}
	subject := []byte("$JS.API.INFO")
	if allocs := testing.AllocsPerRun(100, func() { f.pub.publish(subject, nil, -1, nil) }); allocs != 0 {
		t.Errorf("request delivery allocates %.1f times", allocs)
	}
}
