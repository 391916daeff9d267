package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The dashboard reads messages and acts through the same API that
// clients use: each read or action is a request published, as the user
// behind the HTTP request, to the server's own subscriptions ($JS.API.…,
// $BUS.API.DLQ.REDRIVE.…), so it meets exactly the code and checks a
// client's request meets, its sender's rights included.

// errNoResponder is a request that no service of the server took:
// JetStream is off.
var errNoResponder = errors.New("server: no service answers this request (is JetStream on?)")

// localRequest sends body to subject as a client with rights from would,
// and waits for the first reply (its payload) until ctx ends. Only the
// server's own request handlers receive it; no client sees the request.
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

// jsError is the error an API response carries, as JetStream writes it.
type jsError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code,omitempty"`
	Description string `json:"description"`
}

func (e *jsError) Error() string { return e.Description }

// apiCall sends a JSON request and decodes the JSON reply into v; an
// error in the reply comes back as a *jsError.
func (s *Server) apiCall(ctx context.Context, from Rights, subject string, req, v any) error {
	body := []byte("{}")
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return err
		}
	}
	reply, err := s.localRequest(ctx, from, subject, body)
	if err != nil {
		return err
	}
	var envelope struct {
		Error *jsError `json:"error"`
	}
	if err := json.Unmarshal(reply, &envelope); err != nil {
		return fmt.Errorf("server: unreadable answer on %s: %w", subject, err)
	}
	if envelope.Error != nil {
		return envelope.Error
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(reply, v)
}

// storedMsg is a message as STREAM.MSG.GET answers it.
type storedMsg struct {
	Subject string    `json:"subject"`
	Seq     uint64    `json:"seq"`
	Header  []byte    `json:"hdrs"`
	Data    []byte    `json:"data"`
	Time    time.Time `json:"time"`
}

// readMsg gets message seq of stream, or with next the first one at or
// after seq, through STREAM.MSG.GET as from.
func (s *Server) readMsg(ctx context.Context, from Rights, stream string, seq uint64, next bool) (storedMsg, error) {
	req := map[string]any{"seq": seq}
	if next {
		req["next_by_subj"] = ">"
	}
	var resp struct {
		Message storedMsg `json:"message"`
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := s.apiCall(ctx, from, "$JS.API.STREAM.MSG.GET."+stream, req, &resp)
	return resp.Message, err
}

// validStreamName reports whether name can be put in an API subject as
// one token: the reference's rule (no '.', '*', '>', spaces or control
// characters), so that no path can reach another API operation.
func validStreamName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool {
		return r == '.' || r == '*' || r == '>' || r <= ' ' || r == 0x7f
	})
}

// msgHeader is one line of a NATS header block.
type msgHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// parseHeaders splits a NATS header block ("NATS/1.0\r\nK: V\r\n\r\n")
// into its lines, in order; a status on the first line is left out.
// Malformed lines are skipped, never fatal.
func parseHeaders(hdr []byte) []msgHeader {
	out := []msgHeader{}
	lines := strings.Split(string(hdr), "\r\n")
	for i, line := range lines {
		if i == 0 || line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) == "" {
			continue
		}
		out = append(out, msgHeader{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

// headerOf is the first value of key (case-insensitive) in hs.
func headerOf(hs []msgHeader, key string) string {
	for _, h := range hs {
		if strings.EqualFold(h.Key, key) {
			return h.Value
		}
	}
	return ""
}

// isDeadLetter reports whether a header block is a dead letter's: it has
// the Bus-Dlq-Subject a redrive sends it back to.
func isDeadLetter(hdr []byte) bool {
	return headerOf(parseHeaders(hdr), "Bus-Dlq-Subject") != ""
}

// parseSeq reads a message sequence from a path: a positive integer.
func parseSeq(v string) (uint64, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a message sequence (a positive integer)", v)
	}
	return n, nil
}
