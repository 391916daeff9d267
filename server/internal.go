package server

import (
	"sync/atomic"
	"unsafe"

	"github.com/bus-dev/bus/server/jetstream"
)

// jetstreamCore is the server's side of the seam to JetStream: the
// jetstream.Core interface over the router, in one account's subject
// space (each account's JetStream has its own, accountjs.go). It holds
// nothing but the server and the account.
type jetstreamCore struct {
	s   *Server
	acc *account
}

var _ jetstream.Core = jetstreamCore{}

// Subscribe registers a server-owned subscription whose messages go to h.
func (j jetstreamCore) Subscribe(subject string, h jetstream.Handler) (jetstream.Subscription, error) {
	return j.s.subscribeIn(j.acc, &subscription{subject: subject, handler: msgHandler(h)})
}

// SubscribeRequests registers a server-owned subscription whose handler
// also gets the publishing client's Rights.
func (j jetstreamCore) SubscribeRequests(subject string, h jetstream.RequestHandler) (jetstream.Subscription, error) {
	return j.s.subscribeIn(j.acc, &subscription{subject: subject, request: h})
}

// SubscribeCapture is SubscribeRequests for a stream's capture, which a
// trace-only publish reaches (jetstream.CaptureSubscriber).
func (j jetstreamCore) SubscribeCapture(subject string, h jetstream.RequestHandler) (jetstream.Subscription, error) {
	return j.s.subscribeIn(j.acc, &subscription{subject: subject, request: RequestHandler(h), capture: true})
}

// Unsubscribe removes a subscription made by Subscribe.
func (j jetstreamCore) Unsubscribe(sub jetstream.Subscription) {
	if s, ok := sub.(*subscription); ok {
		j.s.unsubscribeIn(j.acc, s)
	}
}

// Publish sends a message from the server itself. hdr is a NATS header
// block or nil.
func (j jetstreamCore) Publish(subject, reply string, hdr, data []byte) int {
	return j.Deliver(subject, subject, reply, hdr, data)
}

// Deliver sends a stored message to the subscribers of inbox, showing its
// own subject.
func (j jetstreamCore) Deliver(inbox, subject, reply string, hdr, data []byte) int {
	hdrLen := -1
	msg := data
	if len(hdr) > 0 {
		hdrLen = len(hdr)
		msg = make([]byte, 0, len(hdr)+len(data))
		msg = append(append(msg, hdr...), data...)
	}
	return j.s.routeIn(j.acc.trie, nil, stringBytes(inbox), stringBytes(subject), stringBytes(reply), hdrLen, msg)
}

// stringBytes views s as bytes, without the copy a conversion makes:
// three copies a delivered message otherwise (see
// BenchmarkJetStreamConsume in tests). route and the handlers it calls
// only read what they are given (they copy what they keep), as for a
// client's publish buffer, which they must not keep either.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// HasInterest reports whether anything would receive a message on
// subject: a stream import's subscription only while its importer has a
// subscriber where it delivers (importreach.go).
func (j jetstreamCore) HasInterest(subject string) bool {
	return anyReceiver(j.acc.trie, stringBytes(subject), anySubscription)
}

func anySubscription(*subscription) bool { return true }

// WatchInterest calls notify whenever a client subscription matching the
// literal subject comes or goes. The watchers do not tell accounts apart:
// a change in another account's space is a wakeup that finds nothing
// new (the consumer asks HasInterest, which does).
func (j jetstreamCore) WatchInterest(subject string, notify func()) func() {
	return j.s.watchers.add(subject, notify)
}

// subscribeInternal registers a server-owned subscription in the global
// account whose messages go to h (the server's own services use it).
func (s *Server) subscribeInternal(subject string, h msgHandler) (*subscription, error) {
	return s.subscribeIn(s.global, &subscription{subject: subject, handler: h})
}

func (s *Server) unsubscribeInternal(sub *subscription) { s.unsubscribeIn(s.global, sub) }

// subscribeIn registers a server-owned subscription in acc's subject
// space, counted as the server's own.
func (s *Server) subscribeIn(acc *account, sub *subscription) (*subscription, error) {
	if err := acc.trie.Insert(sub.subject, "", sub); err != nil {
		return nil, err
	}
	s.internalCount(acc).Add(1)
	s.interestChanged(acc.trie, sub, 1)
	return sub, nil
}

func (s *Server) unsubscribeIn(acc *account, sub *subscription) {
	if acc.trie.Remove(sub.subject, sub.queue, sub) == nil {
		s.internalCount(acc).Add(-1)
		s.interestChanged(acc.trie, sub, -1)
	}
}

// internalCount counts the server's own subscriptions in acc's trie.
func (s *Server) internalCount(acc *account) *atomic.Int64 {
	if acc == s.global {
		return &s.internalSubs
	}
	return &acc.internal
}

// clientSubs counts the clients' subscriptions: the trie's, less the
// server's own.
func (s *Server) clientSubs() int {
	return s.subs.Count() - int(s.internalSubs.Load())
}

// sendInternal publishes a message from the server itself. hdr is a NATS
// header block or nil.
func (s *Server) sendInternal(subject, reply string, hdr, data []byte) int {
	return jetstreamCore{s, s.global}.Deliver(subject, subject, reply, hdr, data)
}
