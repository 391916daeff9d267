package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bus-dev/bus/header"
)

// The dashboard reads messages and acts through the same API that
// clients use: each read or action is a request published, as the user
// behind the HTTP request, to the server's own subscriptions ($JS.API.…,
// $BUS.API.DLQ.REDRIVE.…) by Source.Request, so it meets exactly the
// code and checks a client's request meets, its sender's rights
// included.

// jsError is the error an API response carries, as JetStream writes it.
type jsError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code,omitempty"`
	Description string `json:"description"`
}

func (e *jsError) Error() string { return e.Description }

// apiCall sends a JSON request and decodes the JSON reply into v; an
// error in the reply comes back as a *jsError.
func (m *Server) apiCall(ctx context.Context, from Rights, subject string, req, v any) error {
	body := []byte("{}")
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return err
		}
	}
	reply, err := m.src.Request(ctx, from, subject, body)
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
func (m *Server) readMsg(ctx context.Context, from Rights, stream string, seq uint64, next bool) (storedMsg, error) {
	req := map[string]any{"seq": seq}
	if next {
		req["next_by_subj"] = ">"
	}
	var resp struct {
		Message storedMsg `json:"message"`
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := m.apiCall(ctx, from, "$JS.API.STREAM.MSG.GET."+stream, req, &resp)
	return resp.Message, err
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
	for name, line := range header.Lines(hdr) {
		if len(name) == 0 {
			continue
		}
		out = append(out, msgHeader{string(name), string(header.LineValue(line))})
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
