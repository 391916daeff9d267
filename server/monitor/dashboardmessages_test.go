package monitor

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// storedAPI answers STREAM.MSG.GET on stream S from msgs (by seq), with
// "no message found" past the last: as JetStream does for next_by_subj.
func storedAPI(msgs map[uint64]storedMsg, last uint64) func(string, map[string]any) (any, error) {
	return func(subject string, body map[string]any) (any, error) {
		if subject != "$JS.API.STREAM.MSG.GET.S" {
			return apiError(404, 10059, "stream not found"), nil
		}
		seq := uint64(body["seq"].(float64))
		_, next := body["next_by_subj"]
		for ; seq <= last; seq++ {
			if m, ok := msgs[seq]; ok {
				return map[string]any{"message": map[string]any{
					"subject": m.Subject, "seq": m.Seq, "time": m.Time,
					"hdrs": base64.StdEncoding.EncodeToString(m.Header), "data": base64.StdEncoding.EncodeToString(m.Data),
				}}, nil
			}
			if !next {
				break
			}
		}
		return apiError(404, 10037, "no message found"), nil
	}
}

func sampleMessages() map[uint64]storedMsg {
	at := time.UnixMilli(1_700_000_000_000).UTC()
	return map[uint64]storedMsg{
		1: {Subject: "jobs.1", Seq: 1, Time: at, Data: []byte("one")},
		3: {Subject: "jobs.3", Seq: 3, Time: at, Data: []byte{0, 1, 2},
			Header: []byte("NATS/1.0\r\nBus-Dlq-Subject: jobs.3\r\nBus-Dlq-Reason: max deliveries\r\nBus-Dlq-Consumer: work\r\n\r\n")},
		4: {Subject: "jobs.4", Seq: 4, Time: at, Data: []byte(strings.Repeat("x", dashPreviewBytes+10))},
	}
}

// A message list is pages of STREAM.MSG.GET next_by_subj requests sent
// as the logged-in user, its payloads cut to the preview; one message
// comes whole.
func TestDashboardMessagesReadThroughTheAPIAsTheUser(t *testing.T) {
	t.Parallel()
	src := &fakeSource{users: map[string]fakeUser{"ann": {password: "pw"}}, answer: storedAPI(sampleMessages(), 4)}
	m := newFakeMonitor(t, src, false)

	code, b := call(t, m, "GET", "/dashboard/api/streams/S/messages?limit=2", "", "", "")
	if code != http.StatusUnauthorized || len(src.sent()) != 0 {
		t.Fatalf("without a login: %d %s, %d requests", code, b, len(src.sent()))
	}
	code, b = call(t, m, "GET", "/dashboard/api/streams/S/messages?limit=2", "", "ann", "wrong")
	if code != http.StatusUnauthorized || len(src.sent()) != 0 {
		t.Fatalf("wrong password: %d %s", code, b)
	}

	code, b = call(t, m, "GET", "/dashboard/api/streams/S/messages?limit=2", "", "ann", "pw")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, b)
	}
	var page struct {
		Stream   string    `json:"stream"`
		Messages []dashMsg `json:"messages"`
		NextSeq  uint64    `json:"next_seq"`
	}
	decode(t, b, &page)
	if len(page.Messages) != 2 || page.Messages[0].Seq != 1 || page.Messages[1].Seq != 3 || page.NextSeq != 4 {
		t.Fatalf("page %+v", page)
	}
	if p := page.Messages[0].Payload; p.Encoding != "text" || p.Text != "one" {
		t.Errorf("payload %+v", p)
	}
	dl := page.Messages[1].DeadLetter
	if dl == nil || dl.Subject != "jobs.3" || dl.Reason != "max deliveries" || dl.Consumer != "work" || page.Messages[1].Payload.Encoding != "hex" {
		t.Errorf("dead letter %+v, payload %+v", dl, page.Messages[1].Payload)
	}
	for _, r := range src.sent() {
		if r.user != "ann" || r.server || r.subject != "$JS.API.STREAM.MSG.GET.S" || r.body["next_by_subj"] != ">" {
			t.Errorf("request %+v: want ann's next_by_subj read of S", r)
		}
	}

	code, b = call(t, m, "GET", "/dashboard/api/streams/S/messages?from=4", "", "ann", "pw")
	decode(t, b, &page)
	if code != http.StatusOK || len(page.Messages) != 1 || page.NextSeq != 0 || !page.Messages[0].Payload.Truncated {
		t.Fatalf("last page: %d %+v", code, page)
	}

	code, b = call(t, m, "GET", "/dashboard/api/streams/S/messages/4", "", "ann", "pw")
	var one dashMsg
	decode(t, b, &one)
	if code != http.StatusOK || one.Payload.Truncated || one.Payload.Size != dashPreviewBytes+10 {
		t.Fatalf("one message: %d %+v", code, one.Payload)
	}
	code, b = call(t, m, "GET", "/dashboard/api/streams/S/messages/2", "", "ann", "pw")
	if code != http.StatusNotFound || errorText(t, b) != "no message found" {
		t.Errorf("a deleted message: %d %s", code, b)
	}
}

// Bad paths are refused before any request is made, and what the API
// cannot answer is a 503.
func TestDashboardMessagesRefuseBadInput(t *testing.T) {
	t.Parallel()
	src := &fakeSource{}
	m := newFakeMonitor(t, src, false)
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/dashboard/api/streams/a.b/messages", http.StatusBadRequest, "invalid stream name"},
		{"/dashboard/api/streams/%3E/messages", http.StatusBadRequest, "invalid stream name"},
		{"/dashboard/api/streams/S/messages?limit=x", http.StatusBadRequest, "limit"},
		{"/dashboard/api/streams/S/messages/0", http.StatusBadRequest, "not a message sequence"},
		{"/dashboard/api/streams/S/messages/-1", http.StatusBadRequest, "not a message sequence"},
	} {
		code, b := call(t, m, "GET", tc.path, "", "", "")
		if code != tc.code || !strings.Contains(errorText(t, b), tc.want) {
			t.Errorf("%s: %d %s, want %d %q", tc.path, code, b, tc.code, tc.want)
		}
	}
	if n := len(src.sent()); n != 0 {
		t.Errorf("%d requests for bad input", n)
	}
	// Without authorization the reads go with the server's rights; no
	// service answering (JetStream off) is a 503 that says so.
	code, b := call(t, m, "GET", "/dashboard/api/streams/S/messages", "", "", "")
	if code != http.StatusServiceUnavailable || errorText(t, b) != errFakeNoResponder.Error() {
		t.Errorf("no responder: %d %s", code, b)
	}
	if r := src.sent(); len(r) != 1 || !r[0].server {
		t.Errorf("requests %+v: want one with the server's rights", r)
	}
	src.answer = func(string, map[string]any) (any, error) {
		return nil, fmt.Errorf("wrapped: %w", errors.ErrUnsupported)
	}
	if code, _ := call(t, m, "GET", "/dashboard/api/streams/S/messages/1", "", "", ""); code != http.StatusServiceUnavailable {
		t.Errorf("a failed request: %d, want 503", code)
	}
}
