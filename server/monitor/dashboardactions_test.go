package monitor

import (
	"net/http"
	"strings"
	"testing"
)

const dashHeader = dashboardHeader + ": 1"

// An action is the API request a client would send, as the logged-in
// user, only after the CSRF guard, the login and the user's publish
// right on that API subject all pass.
func TestDashboardActionsAreChecked(t *testing.T) {
	t.Parallel()
	src := &fakeSource{
		users: map[string]fakeUser{
			"ops":    {password: "pw"},
			"reader": {password: "pw", publish: []string{"$JS.API.STREAM.MSG.GET.S"}},
		},
		answer: func(subject string, _ map[string]any) (any, error) {
			switch subject {
			case "$JS.API.STREAM.PURGE.S":
				return map[string]any{"success": true, "purged": 3}, nil
			case "$JS.API.STREAM.MSG.DELETE.S":
				return map[string]any{"success": true}, nil
			}
			return apiError(404, 10059, "stream not found"), nil
		},
	}
	m := newFakeMonitor(t, src, false)
	for _, tc := range []struct {
		name, path, user, pass string
		headers                []string
		code                   int
		want                   string
	}{
		{"no dashboard header", "/dashboard/api/streams/S/purge", "ops", "pw", nil, http.StatusForbidden, dashboardHeader},
		{"cross origin", "/dashboard/api/streams/S/purge", "ops", "pw", []string{dashHeader, "Sec-Fetch-Site: cross-site"}, http.StatusForbidden, "cross-origin"},
		{"no login", "/dashboard/api/streams/S/purge", "", "", []string{dashHeader}, http.StatusUnauthorized, "log in"},
		{"wrong password", "/dashboard/api/streams/S/purge", "ops", "x", []string{dashHeader}, http.StatusUnauthorized, "log in"},
		{"may not publish", "/dashboard/api/streams/S/purge", "reader", "pw", []string{dashHeader}, http.StatusForbidden, `"reader" may not publish to $JS.API.STREAM.PURGE.S`},
		{"bad stream", "/dashboard/api/streams/a*/purge", "ops", "pw", []string{dashHeader}, http.StatusBadRequest, "invalid stream name"},
		{"bad seq", "/dashboard/api/streams/S/messages/x/delete", "ops", "pw", []string{dashHeader}, http.StatusBadRequest, "not a message sequence"},
	} {
		code, b := call(t, m, "POST", tc.path, "", tc.user, tc.pass, tc.headers...)
		if code != tc.code || !strings.Contains(errorText(t, b), tc.want) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, code, b, tc.code, tc.want)
		}
	}
	if r := src.sent(); len(r) != 0 {
		t.Fatalf("refused actions made requests: %+v", r)
	}

	code, b := call(t, m, "POST", "/dashboard/api/streams/S/purge", "", "ops", "pw", dashHeader)
	var purged struct{ Purged uint64 }
	decode(t, b, &purged)
	if code != http.StatusOK || purged.Purged != 3 {
		t.Fatalf("purge: %d %s", code, b)
	}
	code, b = call(t, m, "POST", "/dashboard/api/streams/S/messages/7/delete", "", "ops", "pw", dashHeader)
	if code != http.StatusOK || !strings.Contains(string(b), `"deleted":7`) {
		t.Fatalf("delete: %d %s", code, b)
	}
	code, b = call(t, m, "POST", "/dashboard/api/streams/T/purge", "", "ops", "pw", dashHeader)
	if code != http.StatusNotFound || errorText(t, b) != "stream not found" {
		t.Errorf("an API error keeps its code: %d %s", code, b)
	}
	r := src.sent()
	if len(r) != 3 || r[0].subject != "$JS.API.STREAM.PURGE.S" || r[1].subject != "$JS.API.STREAM.MSG.DELETE.S" || r[1].body["seq"] != float64(7) {
		t.Fatalf("requests %+v", r)
	}
	for _, req := range r {
		if req.user != "ops" || req.server {
			t.Errorf("request %+v not sent as ops", req)
		}
	}
}

// "Redrive all" sends batches from the stream's start, each where the
// last one stopped, and sums their answers; one dead letter is one
// request.
func TestDashboardRedriveBatches(t *testing.T) {
	t.Parallel()
	src := &fakeSource{answer: func(_ string, body map[string]any) (any, error) {
		if seq, ok := body["seq"]; ok {
			return map[string]any{"redriven": 1, "next_seq": 0, "failed": []any{}, "x": seq}, nil
		}
		switch body["from_seq"] {
		case float64(1):
			return map[string]any{"redriven": 1000, "next_seq": 1001, "failed": []any{}}, nil
		case float64(1001):
			return map[string]any{"redriven": 5, "kept": 2, "next_seq": 0, "failed": []any{map[string]any{"seq": 1003, "reason": "no subject"}}}, nil
		}
		return apiError(400, 10000, "unexpected batch"), nil
	}}
	m := newFakeMonitor(t, src, false)
	code, b := call(t, m, "POST", "/dashboard/api/streams/DLQ/redrive", "", "", "", dashHeader)
	var res redriveResult
	decode(t, b, &res)
	if code != http.StatusOK || res.Redriven != 1005 || res.Kept != 2 || res.NextSeq != 0 || len(res.Failed) != 1 || res.Failed[0].Seq != 1003 {
		t.Fatalf("redrive all: %d %s", code, b)
	}
	r := src.sent()
	if len(r) != 2 || r[0].subject != "$BUS.API.DLQ.REDRIVE.DLQ" || r[0].body["max"] != float64(redriveBatch) || r[1].body["from_seq"] != float64(1001) {
		t.Fatalf("batches %+v", r)
	}

	code, b = call(t, m, "POST", "/dashboard/api/streams/DLQ/redrive", `{"seq":42}`, "", "", dashHeader)
	decode(t, b, &res)
	if code != http.StatusOK || res.Redriven != 1 {
		t.Fatalf("redrive one: %d %s", code, b)
	}
	if r := src.sent(); len(r) != 3 || r[2].body["seq"] != float64(42) || len(r[2].body) != 1 {
		t.Fatalf("one redrive sent %+v", r[len(r)-1])
	}
	code, b = call(t, m, "POST", "/dashboard/api/streams/DLQ/redrive", `{"seq":`, "", "", dashHeader)
	if code != http.StatusBadRequest || !strings.Contains(errorText(t, b), "not the JSON expected") {
		t.Errorf("bad body: %d %s", code, b)
	}
}
