package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// errNoResponder is a request that no service of the server took:
// JetStream is off.
var errNoResponder = errors.New("server: no service answers this request (is JetStream on?)")

// localRequest sends body to subject as a client with rights from would,
// and waits for the first reply (its payload) until ctx ends. Only the
// server's own request handlers receive it; no client sees the request.
// The dashboard's reads and actions come this way (monitor.Source's
// Request), so they meet the checks a client's request meets.
func (s *Server) localRequest(ctx context.Context, from Rights, subject string, body []byte) ([]byte, error) {
	reply, err := s.localRequestIn(ctx, s.global, from, subject, nil, body)
	if err != nil {
		return nil, err
	}
	return reply.Data, nil
}

// localReply is the first reply to a local request: its header block
// (nil without one) and payload, both the caller's to keep.
type localReply struct {
	Header []byte
	Data   []byte
}

// localRequestIn is localRequest in acc's subject space, with a NATS
// header block (nil for none): the server acting for one of that
// account's clients (the MQTT listener storing a QoS 1 message, say)
// meets the same handlers, and the same checks, as that client would.
func (s *Server) localRequestIn(ctx context.Context, acc *account, from Rights, subject string, hdr, body []byte) (localReply, error) {
	return s.localRequestVia(ctx, acc, from, subject, "_INBOX.", hdr, body)
}

// localRequestVia is localRequestIn with the reply on a random inbox
// under inboxPrefix ("_INBOX.", or the MQTT listener's "$MQTT.JSA.",
// which MQTT wildcard filters do not match, so its own traffic does not
// reach a device subscribed to "#").
func (s *Server) localRequestVia(ctx context.Context, acc *account, from Rights, subject, inboxPrefix string, hdr, body []byte) (localReply, error) {
	inbox := inboxPrefix + inboxToken()
	replies := make(chan localReply, 1)
	sub, err := s.subscribeIn(acc, &subscription{subject: inbox, handler: func(_, _ []byte, hdrLen int, msg []byte) bool {
		var r localReply
		if hdrLen >= 0 {
			r.Header, msg = bytes.Clone(msg[:hdrLen]), msg[hdrLen:]
		}
		r.Data = bytes.Clone(msg)
		select {
		case replies <- r:
		default: // only the first reply counts
		}
		return true
	}})
	if err != nil {
		return localReply{}, err
	}
	defer s.unsubscribeIn(acc, sub)
	hdrLen, msg := -1, body
	if len(hdr) > 0 {
		hdrLen = len(hdr)
		msg = append(append(make([]byte, 0, len(hdr)+len(body)), hdr...), body...)
	}
	if s.localPublishIn(acc, from, subject, inbox, hdrLen, msg) == 0 {
		return localReply{}, errNoResponder
	}
	select {
	case r := <-replies:
		return r, nil
	case <-ctx.Done():
		return localReply{}, fmt.Errorf("server: no answer on %s: %w", subject, ctx.Err())
	}
}

// localPublishIn hands msg (with a header block of hdr bytes, or -1)
// on subject with reply to the server's own request handlers in acc's
// subject space, as from a client with rights from, and reports how many
// took it. Nothing waits for the reply: the caller's subscription on
// reply gets it (the MQTT listener's pipelined QoS 1 stores).
func (s *Server) localPublishIn(acc *account, from Rights, subject, reply string, hdr int, msg []byte) int {
	taken := 0
	for _, h := range acc.trie.MatchString(subject).Plain {
		if h.request != nil && h.request(from, stringBytes(subject), stringBytes(reply), hdr, msg) {
			taken++
		}
	}
	return taken
}

// inboxToken is a random inbox name, so that no client can guess where
// the reply goes and answer first.
func inboxToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
