package jetstream

import (
	"bytes"
)

// Message tracing (Nats-Trace-Dest): a traced publish reaches a stream's
// capture with Rights that are also a MsgTrace. The stream adds its event
// (the "js" event of nats-server's trace) and, for Nats-Trace-Only,
// checks the message as it would and stores nothing, sending no ack.
// Stored, the message's Nats-Trace-Dest reads "trace disabled", as in
// the reference, so that one read back and published again is not
// traced again.

// MsgTrace is the Rights of a traced publish.
type MsgTrace interface {
	Rights
	// Publisher is the Rights of the client behind the publish.
	Publisher() Rights
	// TraceOnly reports Nats-Trace-Only: nothing may be stored.
	TraceOnly() bool
	// Stream adds the stream's trace event on the publisher's goroutine
	// and returns what completes it, once: the subject the message is
	// (or would be) stored under, and why it was refused.
	Stream(name string) func(subject string, err error)
}

// CaptureSubscriber is a Core that tells a stream's capture
// subscriptions from its other internal ones (a trace-only publish
// reaches captures and nothing else inside the server).
type CaptureSubscriber interface {
	SubscribeCapture(subject string, h RequestHandler) (Subscription, error)
}

// subscribeCapture subscribes h as a capture where core can tell.
func subscribeCapture(core Core, subject string, h RequestHandler) (Subscription, error) {
	if cs, ok := core.(CaptureSubscriber); ok {
		return cs.SubscribeCapture(subject, h)
	}
	return core.SubscribeRequests(subject, h)
}

// captureTraced is captureMsg for a traced publish.
func (st *stream) captureTraced(mt MsgTrace, subject, reply []byte, hdr int, msg []byte) bool {
	done := mt.Stream(st.name)
	tr := st.tr.Load()
	var refused *apiError
	switch {
	case st.sealed.Load():
		refused = errStreamSealed()
	case st.full():
		refused = st.fullError()
	case tr.refused != nil:
		refused = tr.refused
	}
	if refused != nil {
		done("", refused)
		if !mt.TraceOnly() {
			st.ackError(string(reply), refused)
		}
		return true
	}
	done(tr.storedSubject(string(subject)), nil)
	if mt.TraceOnly() {
		return true
	}
	h := disableTraceDest(msg[:hdr])
	body := append(h, msg[hdr:]...)
	return st.captureMsg(mt.Publisher(), subject, reply, len(h), body)
}

// traceDestLine is the header that asks for a trace, and traceDisabled
// the value that turns it off (not a valid subject, as in the
// reference).
var (
	traceDestLine = []byte("\r\nNats-Trace-Dest:")
	traceDisabled = []byte(" trace disabled")
)

// disableTraceDest returns a copy of the header block hdr with the value
// of Nats-Trace-Dest replaced by "trace disabled".
func disableTraceDest(hdr []byte) []byte {
	out := make([]byte, 0, len(hdr)+len(traceDisabled))
	i := bytes.Index(hdr, traceDestLine)
	if i < 0 {
		return append(out, hdr...)
	}
	start := i + len(traceDestLine)
	end := bytes.Index(hdr[start:], []byte("\r\n"))
	if end < 0 {
		return append(out, hdr...)
	}
	out = append(out, hdr[:start]...)
	out = append(out, traceDisabled...)
	return append(out, hdr[start+end:]...)
}
