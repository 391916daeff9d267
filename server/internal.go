package server

import (
	"unsafe"

	"github.com/bus-dev/bus/server/jetstream"
)

// jetstreamCore is the server's side of the seam to JetStream: the
// jetstream.Core interface over the router. It holds nothing but the
// server.
type jetstreamCore struct{ s *Server }

var _ jetstream.Core = jetstreamCore{}

// Subscribe registers a server-owned subscription whose messages go to h.
func (j jetstreamCore) Subscribe(subject string, h jetstream.Handler) (jetstream.Subscription, error) {
	return j.s.subscribeInternal(subject, msgHandler(h))
}

// SubscribeRequests registers a server-owned subscription whose handler
// also gets the publishing client's Rights.
func (j jetstreamCore) SubscribeRequests(subject string, h jetstream.RequestHandler) (jetstream.Subscription, error) {
	return j.s.subscribeRequests(subject, h)
}

// SubscribeCapture is SubscribeRequests for a stream's capture, which a
// trace-only publish reaches (jetstream.CaptureSubscriber).
func (j jetstreamCore) SubscribeCapture(subject string, h jetstream.RequestHandler) (jetstream.Subscription, error) {
	return j.s.addInternal(&subscription{subject: subject, request: RequestHandler(h), capture: true})
}

// Unsubscribe removes a subscription made by Subscribe.
func (j jetstreamCore) Unsubscribe(sub jetstream.Subscription) {
	if s, ok := sub.(*subscription); ok {
		j.s.unsubscribeInternal(s)
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
	return j.s.route(nil, stringBytes(inbox), stringBytes(subject), stringBytes(reply), hdrLen, msg)
}

// stringBytes views s as bytes, without the copy a conversion makes:
// three copies a delivered message otherwise (see
// BenchmarkJetStreamConsume in tests). route and the handlers it calls
// only read what they are given (they copy what they keep), as for a
// client's publish buffer, which they must not keep either.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// HasInterest reports whether anything would receive a message on subject.
func (j jetstreamCore) HasInterest(subject string) bool {
	return !j.s.subs.MatchString(subject).Empty()
}

// WatchInterest calls notify whenever a client subscription matching the
// literal subject comes or goes.
func (j jetstreamCore) WatchInterest(subject string, notify func()) func() {
	return j.s.watchers.add(subject, notify)
}

// subscribeInternal registers a server-owned subscription whose messages
// go to h (the JetStream seam and the server's own services use it).
func (s *Server) subscribeInternal(subject string, h msgHandler) (*subscription, error) {
	sub := &subscription{subject: subject, handler: h}
	if err := s.subs.Insert(subject, "", sub); err != nil {
		return nil, err
	}
	s.internalSubs.Add(1)
	s.interestChanged(s.subs, sub, 1)
	return sub, nil
}

func (s *Server) unsubscribeInternal(sub *subscription) {
	if s.subs.Remove(sub.subject, sub.queue, sub) == nil {
		s.internalSubs.Add(-1)
		s.interestChanged(s.subs, sub, -1)
	}
}

// clientSubs counts the clients' subscriptions: the trie's, less the
// server's own.
func (s *Server) clientSubs() int {
	return s.subs.Count() - int(s.internalSubs.Load())
}

// sendInternal publishes a message from the server itself. hdr is a NATS
// header block or nil.
func (s *Server) sendInternal(subject, reply string, hdr, data []byte) int {
	return jetstreamCore{s}.Deliver(subject, subject, reply, hdr, data)
}
