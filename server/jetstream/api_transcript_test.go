package jetstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAPITranscript sends the requests of testdata/api_answers.txt to a
// service on a fake core and compares what comes back with the
// transcript: which requests are answered at all, with which type, error
// code and description, which errors are counted, and the advisories in
// their order with the answers. Run with -update to rewrite it; review
// the diff like code. Whole responses are compared with the reference
// by the differential tests in tests/.
//
// Lines: "publish <subject>" stores a message in a stream; "> <subject> [body]" is
// an API request from the server itself with reply subject _INBOX.r;
// "reader> " one from a user who may not read x.secret.> (nor so all of
// a stream); "noreply> " one without a reply subject. What follows a
// request, up to the next one, is what it got: "< <subject> <type> ok" or
// "< <subject> <type> <code> <err_code> <description>" for a JSON
// answer, "< <subject> <status line>" for a direct get, "< error
// counted", and "< <advisory subject>". Consumer unpinned advisories are
// left out: the consumer's goroutine sends them, at no fixed place.
func TestAPITranscript(t *testing.T) {
	const path = "testdata/api_answers.txt"
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	core := newFakeCore()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	svc, err := New(core, Options{Dir: t.TempDir(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	defer svc.Shutdown()
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		if strings.HasPrefix(line, "< ") {
			continue // what was got last time
		}
		out.WriteString(line + "\n")
		cmd, arg, _ := strings.Cut(line, " ")
		subject, body, _ := strings.Cut(arg, " ")
		r := apiRequest{subject: apiPrefix + subject, reply: "_INBOX.r", body: []byte(body)}
		switch cmd {
		case "", "#":
			continue
		case "publish":
			publishAcked(t, core, arg)
			continue
		case ">":
		case "reader>":
			r.from = noSecrets{}
		case "noreply>":
			r.reply = ""
		default:
			t.Fatalf("%s: unknown line %q", path, line)
		}
		core.mu.Lock()
		core.sent = nil
		core.mu.Unlock()
		errors := svc.apiErrors.Load()
		svc.handle(r)
		core.mu.Lock()
		for _, m := range core.sent {
			if s := answerLine(m); s != "" {
				out.WriteString("< " + s + "\n")
			}
		}
		core.mu.Unlock()
		if svc.apiErrors.Load() != errors {
			out.WriteString("< error counted\n")
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := out.String(); got != string(in) {
		t.Fatalf("%s differs (run with -update and review the diff):\n%s", path, got)
	}
}

// publishAcked publishes to subject, a stream's, and waits for the pub
// ack: then the message is stored and readable.
func publishAcked(t *testing.T, core *fakeCore, subject string) {
	t.Helper()
	core.mu.Lock()
	core.sent = nil
	core.mu.Unlock()
	core.Deliver(subject, subject, "_INBOX.ack", nil, []byte("m"))
	deadline := time.Now().Add(5 * time.Second)
	for len(sentTo(core, "_INBOX.ack")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("publish to %s: no pub ack", subject)
		}
		time.Sleep(time.Millisecond) // polling for the appender's ack
	}
}

// answerLine sums up one message the service sent; "" leaves it out.
func answerLine(m fakeMsg) string {
	switch {
	case strings.HasPrefix(m.to, "$JS.EVENT.ADVISORY.CONSUMER.UNPINNED."), strings.HasPrefix(m.to, "snap"):
		return "" // sent off the request's goroutine
	case strings.HasPrefix(m.to, "$JS.EVENT."):
		return m.to
	case len(m.hdr) > 0:
		status, _, _ := bytes.Cut(m.hdr, []byte("\r\n"))
		return m.to + " " + string(status)
	}
	var resp struct {
		Type  string    `json:"type"`
		Error *apiError `json:"error"`
	}
	if err := json.Unmarshal(m.data, &resp); err != nil {
		return fmt.Sprintf("%s not JSON: %q", m.to, m.data)
	}
	if resp.Error == nil {
		return m.to + " " + resp.Type + " ok"
	}
	return fmt.Sprintf("%s %s %d %d %s", m.to, resp.Type, resp.Error.Code, resp.Error.ErrCode, resp.Error.Description)
}

// noSecrets is a user who may read everything but x.secret.> (so not
// all of a stream that captures x.>).
type noSecrets struct{}

func (noSecrets) User() string { return "reader" }
func (noSecrets) MayRead(filter string) bool {
	return filter != ">" && filter != "x.>" && !strings.HasPrefix(filter, "x.secret")
}
func (noSecrets) MayPublish(string) bool { return true }
