package server

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// importsFixture is a server with A exporting a singleton service
// "svc.*" and a streamed one "feed", and B importing both ("svc.*" as
// "b.svc.*"), with one connection in each.
func importsFixture(t *testing.T, threshold time.Duration) (srv *Server, a, b *conn) {
	t.Helper()
	srv, err := New(Options{Accounts: []Account{
		{Name: "A", Users: []User{{Name: "a", Password: "p"}}, Exports: Exports{Services: []ServiceExport{
			{Subject: "svc.*"}, {Subject: "feed", ResponseType: "stream", ResponseThreshold: threshold}}}},
		{Name: "B", Users: []User{{Name: "b", Password: "p"}}, Imports: Imports{Services: []ServiceImport{
			{Account: "A", Subject: "svc.*", To: "b.svc.*"}, {Account: "A", Subject: "feed"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a, b = pipeConn(t, srv, 1), pipeConn(t, srv, 2)
	for c, user := range map[*conn]string{a: "a", b: "b"} {
		if err := c.becomeUser(srv.auth().users[user].id); err != nil {
			t.Fatal(err)
		}
	}
	return srv, a, b
}

// The reply subscriptions a service import makes in the exporting
// account go away: a singleton's with its response, any with no
// responder, a stream's after its threshold.
func TestServiceImportResponsesCleanedUp(t *testing.T) {
	srv, a, b := importsFixture(t, 50*time.Millisecond)
	accA := srv.accountSet()["A"]
	base := accA.internal.Load()
	sub := func(c *conn, subject, sid string) {
		if err := c.processSub(&op{kind: opSub, subject: []byte(subject), sid: []byte(sid)}); err != nil {
			t.Fatal(err)
		}
	}
	sub(b, "inbox.>", "1")

	// Nobody serves svc.x in A yet: no responders, nothing left behind.
	if n := b.publish([]byte("b.svc.x"), []byte("inbox.1"), -1, nil); n != 0 {
		t.Fatalf("delivered to %d without a responder", n)
	}
	if got := accA.internal.Load(); got != base {
		t.Fatalf("%d reply subscriptions left after no responder", got-base)
	}

	sub(a, "svc.*", "1")
	if n := b.publish([]byte("b.svc.x"), []byte("inbox.2"), -1, nil); n != 1 {
		t.Fatalf("request delivered to %d", n)
	}
	if got := accA.internal.Load(); got != base+1 {
		t.Fatalf("%d reply subscriptions while the request is open, want 1", got-base)
	}
	// A answers on the reply subject it was given, twice.
	reply := lastReply(t, a)
	for range 2 {
		a.publish([]byte(reply), nil, -1, []byte("answer"))
	}
	if got := accA.internal.Load(); got != base {
		t.Fatalf("%d reply subscriptions after the singleton's answer", got-base)
	}
	if msgs, _ := b.out.counts(); msgs != 1 {
		t.Fatalf("B got %d answers, want the singleton's 1", msgs)
	}

	// A streamed service keeps its reply subscription for its threshold.
	sub(a, "feed", "2")
	b.publish([]byte("feed"), []byte("inbox.3"), -1, nil)
	deadline := time.Now().Add(5 * time.Second)
	for accA.internal.Load() != base {
		if time.Now().After(deadline) {
			t.Fatal("the streamed service's reply subscription outlived its threshold")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lastReply is the reply subject of the last message queued for c.
func lastReply(t *testing.T, c *conn) string {
	t.Helper()
	var taken []*chunk
	taken = c.out.take(taken)
	defer c.out.written(taken)
	var all []byte
	for _, ch := range taken {
		all = append(all, ch.b...)
	}
	// MSG <subject> <sid> <reply> <size>
	var subject, sid, reply string
	var size int
	for len(all) > 0 {
		var line []byte
		line, all, _ = cutLine(all)
		if n, _ := fmt.Sscanf(string(line), "MSG %s %s %s %d", &subject, &sid, &reply, &size); n == 4 {
			all = all[min(size+2, len(all)):]
		}
	}
	if reply == "" {
		t.Fatal("no request delivered")
	}
	return reply
}

var errNoLine = errors.New("no line")

func cutLine(b []byte) ([]byte, []byte, error) {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return b[:i], b[i+2:], nil
		}
	}
	return b, nil, errNoLine
}

// A reload subscribes the imports again only when exports or imports
// changed: one without a change keeps the subscriptions it has.
func TestReloadReinstallsImportsOnlyWhenTheyChange(t *testing.T) {
	opts := func(prefix string) Options {
		return Options{Accounts: []Account{
			{Name: "A", Exports: Exports{Streams: []StreamExport{{Subject: "e.>"}}}},
			{Name: "B", Imports: Imports{Streams: []StreamImport{{Account: "A", Subject: "e.>", Prefix: prefix}}}},
		}}
	}
	srv, err := New(opts(""))
	if err != nil {
		t.Fatal(err)
	}
	first := srv.installed[0].sub
	subsInA := srv.accountSet()["A"].trie.Count()
	if err := srv.Reload(opts("")); err != nil {
		t.Fatalf("reload without a change: %v", err)
	}
	if len(srv.installed) != 1 || srv.installed[0].sub != first {
		t.Fatalf("a reload without a change subscribed the imports again: %v", srv.installed)
	}
	if err := srv.Reload(opts("from_a")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if len(srv.installed) != 1 || srv.installed[0].sub == first || srv.accountSet()["A"].trie.Count() != subsInA {
		t.Fatalf("after a changed import: %d imports installed, the old one kept %v, %d subscriptions in A (%d before)",
			len(srv.installed), srv.installed[0].sub == first, srv.accountSet()["A"].trie.Count(), subsInA)
	}
}
