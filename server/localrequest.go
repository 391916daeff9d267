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
	inbox := "_INBOX." + inboxToken()
	replies := make(chan []byte, 1)
	sub, err := s.subscribeInternal(inbox, func(_, _ []byte, hdr int, msg []byte) bool {
		if hdr >= 0 {
			msg = msg[hdr:]
		}
		select {
		case replies <- bytes.Clone(msg):
		default: // only the first reply counts
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	defer s.unsubscribeInternal(sub)
	taken := 0
	for _, h := range s.subs.MatchString(subject).Plain {
		if h.request != nil && h.request(from, []byte(subject), []byte(inbox), -1, body) {
			taken++
		}
	}
	if taken == 0 {
		return nil, errNoResponder
	}
	select {
	case b := <-replies:
		return b, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("server: no answer on %s: %w", subject, ctx.Err())
	}
}

// inboxToken is a random inbox name, so that no client can guess where
// the reply goes and answer first.
func inboxToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}
