package jetstream

// Core is what JetStream needs of the protocol core: the whole seam
// between the two halves of the server. The server package implements it;
// JetStream never reaches the core any other way.
//
// Handlers run on the publishing connection's reader goroutine: they must
// copy what they keep and must not block for long.
type Core interface {
	// Subscribe registers a server-owned subscription whose messages go
	// to h.
	Subscribe(subject string, h Handler) (Subscription, error)
	// SubscribeRequests is Subscribe for requests whose handling depends
	// on who sent them: h also gets the publishing client's Rights.
	SubscribeRequests(subject string, h RequestHandler) (Subscription, error)
	// Unsubscribe removes a subscription made by Subscribe.
	Unsubscribe(Subscription)
	// Publish sends a message from the server itself; hdr is a NATS
	// header block or nil. It returns how many subscriptions got it.
	Publish(subject, reply string, hdr, data []byte) int
	// Deliver sends a stored message to the subscribers of inbox, showing
	// subject (the message's own) rather than the inbox.
	Deliver(inbox, subject, reply string, hdr, data []byte) int
	// HasInterest reports whether anything would receive a message on
	// subject.
	HasInterest(subject string) bool
	// MayDeliver reports whether Deliver(inbox, subject, …) would reach
	// a subscriber, under the stored-read rule (docs/security.md): some
	// subscriber of inbox may receive a stored message shown on subject.
	// With reference_stored_reads it is HasInterest(inbox), as the
	// reference counts a delivery whoever may take it.
	MayDeliver(inbox, subject string) bool
	// FiltersStored reports whether MayDeliver(inbox, …) can be false
	// while someone listens on inbox (a subscriber has rights to check
	// a stored subject against), so that MayDeliver is asked only then.
	FiltersStored(inbox string) bool
	// WatchInterest calls notify (on whichever goroutine changed the
	// subscriptions) whenever a subscription that matches the literal
	// subject is added or removed, so a push consumer learns that its
	// deliver subject gained or lost a listener without polling. notify
	// must not block. cancel stops the notifications.
	WatchInterest(subject string, notify func()) (cancel func())
	// UserRights returns what the named user may do now, for what the
	// server does on behalf of an owner (owner.go): "" is the operator,
	// who may do anything; false means no such user is configured (a
	// reload removed it).
	UserRights(user string) (Rights, bool)
}

// Handler receives a message on a server-owned subscription. hdr is the
// length of the header block at the start of msg, or -1. It reports
// whether it took the message; one it declines does not count as
// received, so a request may still get the no-responders status.
type Handler func(subject, reply []byte, hdr int, msg []byte) bool

// RequestHandler is Handler with the Rights of the client that published
// the message.
type RequestHandler func(from Rights, subject, reply []byte, hdr int, msg []byte) bool

// Rights is what JetStream may ask about the client behind a request:
// who it is, and what that user may read and publish. Values are
// immutable and safe for concurrent use.
type Rights interface {
	// User names the user for logs; "" when authorization is off.
	User() string
	// MayRead reports whether the user may receive every subject that
	// filter (a subject or a pattern) matches.
	MayRead(filter string) bool
	// MayPublish reports whether the user may publish to subject, or,
	// for a pattern, to every subject it matches.
	MayPublish(subject string) bool
}

// Subscription is an opaque handle returned by Core.Subscribe.
type Subscription any
