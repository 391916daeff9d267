package server

import (
	"strings"
	"testing"
)

// leafFixture is a server with a client publisher, a local subscriber
// and one leaf link whose hub announced interest, over pipes that
// nobody reads: the tests read the queues.
type leafFixture struct {
	srv       *Server
	pub, link *conn
	taken     []*chunk
}

func newLeafFixture(tb testing.TB, remote LeafRemote, hubInterest ...string) *leafFixture {
	tb.Helper()
	f := &leafFixture{srv: newRouteFixture(tb, 0).srv}
	f.srv.leafInterest = newLeafInterest(f.srv.id)
	f.pub = pipeConn(tb, f.srv, 1)
	f.link = pipeConn(tb, f.srv, 2)
	f.link.parser = newLeafParser(DefaultMaxPayload)
	f.link.leaf = &leafState{link: &leafLink{srv: f.srv}, down: make(chan struct{})}
	f.link.leaf.setRights(leafInfo{}, &remote)
	for _, line := range hubInterest {
		if err := f.link.parser.parse([]byte(line+"\r\n"), f.link); err != nil {
			tb.Fatal(err)
		}
	}
	return f
}

// sent is what the link's queue holds, emptied.
func (f *leafFixture) sent(c *conn) string {
	f.taken = c.out.take(f.taken)
	var b strings.Builder
	for _, ch := range f.taken {
		b.Write(ch.b)
	}
	c.out.written(f.taken)
	return b.String()
}

func TestLeafMessageCrossesOnceWithQueues(t *testing.T) {
	f := newLeafFixture(t, LeafRemote{}, "LS+ orders.*", "LS+ orders.eu", "LS+ orders.eu workers 2", "LS+ orders.> audit 1")
	if n := f.pub.publish([]byte("orders.eu"), []byte("_INBOX.1"), -1, []byte("hi")); n != 1 {
		t.Fatalf("delivered to %d, want the one link", n)
	}
	got := f.sent(f.link)
	for _, want := range []string{"LMSG orders.eu + _INBOX.1 workers audit 2\r\nhi\r\n", "LMSG orders.eu + _INBOX.1 audit workers 2\r\nhi\r\n"} {
		if got == want {
			return
		}
	}
	t.Fatalf("link got %q", got)
}

func TestLeafQueueGroupPrefersLocalMember(t *testing.T) {
	f := newLeafFixture(t, LeafRemote{}, "LS+ jobs workers 5")
	local := pipeConn(t, f.srv, 3)
	if err := local.processSub(&op{kind: opSub, subject: []byte("jobs"), queue: []byte("workers"), sid: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		f.pub.publish([]byte("jobs"), nil, -1, []byte("x"))
	}
	if got := f.sent(f.link); got != "" {
		t.Fatalf("a local member exists, yet the link got %q", got)
	}
	if got := strings.Count(f.sent(local), "MSG jobs 1 1\r\n"); got != 50 {
		t.Fatalf("local member got %d of 50", got)
	}
}

func TestLeafMessageFromHubStaysLocal(t *testing.T) {
	f := newLeafFixture(t, LeafRemote{}, "LS+ news", "LS+ jobs workers 1")
	local := pipeConn(t, f.srv, 3)
	for i, o := range []*op{
		{kind: opSub, subject: []byte("news"), sid: []byte("1")},
		{kind: opSub, subject: []byte("jobs"), queue: []byte("workers"), sid: []byte("2")},
		{kind: opSub, subject: []byte("jobs"), queue: []byte("other"), sid: []byte("3")},
	} {
		if err := local.processSub(o); err != nil {
			t.Fatal(i, err)
		}
	}
	in := "LMSG news 1\r\na\r\nLMSG jobs | workers 1\r\nb\r\nLMSG jobs 1\r\nc\r\n"
	if err := f.link.parser.parse([]byte(in), f.link); err != nil {
		t.Fatal(err)
	}
	if got := f.sent(f.link); got != "" {
		t.Fatalf("the hub's own messages went back to it: %q", got)
	}
	// news to the plain sub; jobs to the named group only, and a jobs
	// message naming no group reaches no group.
	if got, want := f.sent(local), "MSG news 1 1\r\na\r\nMSG jobs 2 1\r\nb\r\n"; got != want {
		t.Fatalf("local got %q, want %q", got, want)
	}
}

func TestLeafJetStreamDeliveryCarriesItsSubject(t *testing.T) {
	f := newLeafFixture(t, LeafRemote{}, "LS+ _INBOX.>")
	f.srv.route(nil, []byte("_INBOX.abc"), []byte("orders.1"), []byte("$JS.ACK.S.C.1.1.1.1.0"), -1, []byte("o"))
	if got, want := f.sent(f.link), "LMSG _INBOX.abc $JS.ACK.S.C.1.1.1.1.0@orders.1 1\r\no\r\n"; got != want {
		t.Fatalf("link got %q, want %q", got, want)
	}
}

func TestLeafRightsKeepSubjectsIn(t *testing.T) {
	f := newLeafFixture(t, LeafRemote{DenyExports: []string{"secret.>"}}, "LS+ >")
	for _, s := range []string{"secret.x", "$JS.API.INFO", "$KV.b.k", "open.x"} {
		f.pub.publish([]byte(s), nil, -1, []byte("x"))
	}
	if got, want := f.sent(f.link), "LMSG open.x 1\r\nx\r\n"; got != want {
		t.Fatalf("link got %q, want %q", got, want)
	}
}

func TestLeafInterestAnnouncedWithWeights(t *testing.T) {
	f := newLeafFixture(t, LeafRemote{DenyImports: []string{"private.>"}})
	f.srv.leafInterest.join(f.link)
	lds := f.sent(f.link)
	if lds != "LS+ $LDS."+f.srv.id+"\r\n" {
		t.Fatalf("join sent %q", lds)
	}
	c := pipeConn(t, f.srv, 3)
	sub := func(subject, queue, sid string) {
		if err := c.processSub(&op{kind: opSub, subject: []byte(subject), queue: []byte(queue), sid: []byte(sid)}); err != nil {
			t.Fatal(err)
		}
	}
	sub("a", "", "1")
	sub("a", "", "2")
	sub("q", "w", "3")
	sub("q", "w", "4")
	sub("private.x", "", "5")
	sub("$SYS.x", "", "6")
	c.processUnsub(&op{kind: opUnsub, sid: []byte("3"), max: -1})
	c.processUnsub(&op{kind: opUnsub, sid: []byte("1"), max: -1})
	c.processUnsub(&op{kind: opUnsub, sid: []byte("2"), max: -1})
	want := "LS+ a\r\nLS+ q w 1\r\nLS+ q w 2\r\nLS+ q w 1\r\nLS- a\r\n"
	if got := f.sent(f.link); got != want {
		t.Fatalf("announced %q, want %q", got, want)
	}
	c.close("gone", false)
	if got := f.sent(f.link); got != "LS- q w\r\n" {
		t.Fatalf("after close %q", got)
	}
}

func TestLeafPublishAllocatesNothingPerMessage(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	f := newLeafFixture(t, LeafRemote{}, "LS+ orders.*", "LS+ orders.eu")
	subject, payload := []byte("orders.eu"), []byte("hello")
	allocs := testing.AllocsPerRun(1000, func() {
		f.pub.publish(subject, nil, -1, payload)
		f.pub.wakeWriters()
		f.taken = f.link.out.take(f.taken)
		f.link.out.written(f.taken)
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per message across a leaf link", allocs)
	}
}

// BenchmarkLeafPublish is a client's publish that crosses a leaf link
// (see leafroute.go).
func BenchmarkLeafPublish(b *testing.B) {
	f := newLeafFixture(b, LeafRemote{}, "LS+ bench.*", "LS+ bench.subject")
	subject, payload := []byte("bench.subject"), make([]byte, 128)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	i := 0
	for b.Loop() {
		f.pub.publish(subject, nil, -1, payload)
		if i++; i%64 == 0 {
			f.pub.wakeWriters()
			f.taken = f.link.out.take(f.taken)
			f.link.out.written(f.taken)
		}
	}
}

func TestLeafLoopDetectionCutsTheLink(t *testing.T) {
	f := newLeafFixture(t, LeafRemote{})
	f.srv.leafLinks = []*leafLink{f.link.leaf.link}
	f.link.leaf.link.conn = f.link
	if err := f.link.parser.parse([]byte("LS+ $LDS.other\r\n"), f.link); err != nil {
		t.Fatal(err)
	}
	if f.link.closing.Load() {
		t.Fatal("another server's loop-detection subject cut the link")
	}
	if err := f.link.parser.parse([]byte("LS+ "+f.srv.leafInterest.lds+"\r\n"), f.link); err != nil {
		t.Fatal(err)
	}
	if !f.link.closing.Load() || !f.link.leaf.link.loop {
		t.Fatal("this server's own loop-detection subject came back and the link stayed")
	}
	want := "-ERR 'Loop detected for leafnode account=\"$G\". Delaying attempt to reconnect for 30s'\r\n"
	if got := f.sent(f.link); got != want {
		t.Fatalf("link sent %q, want %q", got, want)
	}
	select {
	case <-f.link.leaf.down:
	default:
		t.Fatal("the link's supervisor was not told it is down")
	}
}
