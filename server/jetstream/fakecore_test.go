package jetstream

import (
	"sync"
	"testing"

	"github.com/bus-dev/bus/subjects"
)

// fakeCore is a Core for the package's tests: server-owned
// subscriptions in a trie, publishes delivered to them synchronously, and
// everything published to a subject nobody owns kept in sent.
type fakeCore struct {
	subs *subjects.Trie[*fakeSub]

	mu       sync.Mutex // guards the fields below
	sent     []fakeMsg
	watchers map[string][]func()
}

type fakeSub struct {
	subject string
	h       Handler
}

type fakeMsg struct {
	to, subject, reply string
	hdr, data          []byte
}

func newFakeCore() *fakeCore {
	return &fakeCore{subs: subjects.NewTrie[*fakeSub](), watchers: map[string][]func(){}}
}

func (f *fakeCore) Subscribe(subject string, h Handler) (Subscription, error) {
	s := &fakeSub{subject: subject, h: h}
	if err := f.subs.Insert(subject, "", s); err != nil {
		return nil, err
	}
	return s, nil
}

func (f *fakeCore) SubscribeRequests(subject string, h RequestHandler) (Subscription, error) {
	return f.Subscribe(subject, func(subject, reply []byte, hdr int, msg []byte) bool {
		return h(nil, subject, reply, hdr, msg) // the server's own rights
	})
}

func (f *fakeCore) Unsubscribe(sub Subscription) {
	s := sub.(*fakeSub)
	_ = f.subs.Remove(s.subject, "", s)
}

func (f *fakeCore) Publish(subject, reply string, hdr, data []byte) int {
	return f.Deliver(subject, subject, reply, hdr, data)
}

func (f *fakeCore) Deliver(inbox, subject, reply string, hdr, data []byte) int {
	r := f.subs.MatchString(inbox)
	if r.Empty() {
		f.mu.Lock()
		f.sent = append(f.sent, fakeMsg{inbox, subject, reply, hdr, data})
		f.mu.Unlock()
		return 0
	}
	msg := append(append([]byte(nil), hdr...), data...)
	hdrLen := -1
	if len(hdr) > 0 {
		hdrLen = len(hdr)
	}
	n := 0
	for _, s := range r.Plain {
		if s.h([]byte(subject), []byte(reply), hdrLen, msg) {
			n++
		}
	}
	return n
}

// HasInterest: every inbox listens, so deliveries are kept in sent.
func (f *fakeCore) HasInterest(string) bool { return true }

// MayDeliver: nobody is denied a stored message.
func (f *fakeCore) MayDeliver(string, string) bool { return true }

func (f *fakeCore) FiltersStored(string) bool { return false }

func (f *fakeCore) WatchInterest(subject string, notify func()) func() {
	return func() {}
}

// UserRights: every owner is the operator, as requests come from the
// server itself (SubscribeRequests).
func (f *fakeCore) UserRights(string) (Rights, bool) { return nil, true }

// startService starts a service on core with its store in a temporary
// directory, and shuts it down at the end of the test.
func startService(tb testing.TB, core *fakeCore) *Service {
	tb.Helper()
	svc, err := New(core, Options{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(svc.Shutdown)
	return svc
}
