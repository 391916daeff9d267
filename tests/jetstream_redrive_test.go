package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

type redriveResult struct {
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
	Redriven int `json:"redriven"`
	Skipped  int `json:"skipped"`
	Kept     int `json:"kept"`
	Failed   []struct {
		Seq    uint64 `json:"seq"`
		Reason string `json:"reason"`
	} `json:"failed"`
	NextSeq uint64 `json:"next_seq"`
}

func redrive(t *testing.T, nc *nats.Conn, stream, body string) redriveResult {
	t.Helper()
	resp, err := nc.Request("$BUS.API.DLQ.REDRIVE."+stream, []byte(body), 10*time.Second)
	if err != nil {
		t.Fatalf("redrive %s %s: %v", stream, body, err)
	}
	var r redriveResult
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		t.Fatalf("redrive answer %q: %v", resp.Data, err)
	}
	return r
}

// deadLetterJobs stores n jobs and makes consumer W give up on each.
func deadLetterJobs(t *testing.T, js jetstream.JetStream, nc *nats.Conn, n int) (jetstream.Stream, jetstream.Stream) {
	t.Helper()
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs.>"}})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.jobs"}})
	if err != nil {
		t.Fatal(err)
	}
	createConsumerRaw(t, nc, "JOBS", "W", `{"durable_name":"W","ack_policy":"explicit","x_bus_dead_letter_subject":"dlq.jobs"}`)
	for i := range n {
		if _, err := js.Publish(ctx, fmt.Sprintf("jobs.%d", i), []byte(fmt.Sprint(i)), jetstream.WithMsgID(fmt.Sprint("job-", i))); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.Consumer(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	for got := 0; got < n; {
		b, err := c.Fetch(n-got, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			if err := m.TermWithReason("bad input"); err != nil {
				t.Fatal(err)
			}
			got++
		}
	}
	eventually(t, 5*time.Second, func() bool {
		i, err := dlq.Info(ctx)
		return err == nil && i.State.Msgs == uint64(n)
	})
	return st, dlq
}

// TestRedriveMovesDeadLettersBack: one, then the rest in batches; each
// goes back to its original subject without the Bus-Dlq-* headers, with
// its redrive counted, and is gone from the DLQ; a redriven message that
// dies again comes back with its history.
func TestRedriveMovesDeadLettersBack(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	nc := connect(t, busURL(s))
	st, dlq := deadLetterJobs(t, js, nc, 5)

	r := redrive(t, nc, "DLQ", `{"seq":2}`)
	if r.Error != nil || r.Redriven != 1 || len(r.Failed) != 0 || r.NextSeq != 0 {
		t.Fatalf("redrive one: %+v", r)
	}
	r = redrive(t, nc, "DLQ", `{"max":2,"rate":500}`)
	if r.Redriven != 2 || r.NextSeq == 0 {
		t.Fatalf("first batch: %+v", r)
	}
	r = redrive(t, nc, "DLQ", fmt.Sprintf(`{"from_seq":%d}`, r.NextSeq))
	if r.Redriven != 2 || r.NextSeq != 0 {
		t.Fatalf("second batch: %+v", r)
	}
	if i, _ := dlq.Info(ctx); i.State.Msgs != 0 {
		t.Fatalf("DLQ keeps %d messages", i.State.Msgs)
	}
	info, err := st.Info(ctx)
	if err != nil || info.State.Msgs != 10 {
		t.Fatalf("JOBS has %d messages (%v), want 5 originals and 5 redriven", info.State.Msgs, err)
	}
	m, err := st.GetMsg(ctx, 6) // the first redriven: dead letter 2, job 1
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "jobs.1" || string(m.Data) != "1" {
		t.Fatalf("redriven %s %q, want jobs.1 \"1\"", m.Subject, m.Data)
	}
	for k := range m.Header {
		if len(k) >= 8 && k[:8] == "Bus-Dlq-" {
			t.Fatalf("redriven message keeps %s", k)
		}
	}
	if m.Header.Get("Bus-Redrive-Count") != "1" || m.Header.Get("Bus-Origin-Msg-Id") != "job-1" || m.Header.Get("Nats-Msg-Id") != "redrive.DLQ.2" {
		t.Fatalf("redriven headers %v", m.Header)
	}

	// W gives up on the redriven ones too: they come back with history.
	c, _ := st.Consumer(ctx, "W")
	b, err := c.Fetch(5, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		_ = m.Term()
	}
	eventually(t, 5*time.Second, func() bool {
		i, err := dlq.Info(ctx)
		return err == nil && i.State.Msgs == 5
	})
	again, err := dlq.GetMsg(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	if again.Header.Get("Bus-Redrive-Count") != "1" || again.Header.Get("Bus-Dlq-Stream") != "JOBS" {
		t.Fatalf("dead again headers %v", again.Header)
	}
	r = redrive(t, nc, "DLQ", `{"seq":6}`)
	if r.Redriven != 1 {
		t.Fatalf("redrive again: %+v", r)
	}
	last, err := st.GetLastMsgForSubject(ctx, again.Header.Get("Bus-Dlq-Subject"))
	if err != nil || last.Header.Get("Bus-Redrive-Count") != "2" || last.Header.Get("Bus-Origin-Msg-Id") != "job-1" {
		t.Fatalf("second redrive %v %v", last.Header, err)
	}
}

// TestRedriveSelectsAndRefuses: filters by consumer and origin, keep,
// bad requests, a missing stream, and a subject nothing stores.
func TestRedriveSelectsAndRefuses(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	nc := connect(t, busURL(s))
	_, dlq := deadLetterJobs(t, js, nc, 3)

	if r := redrive(t, nc, "DLQ", `{"consumer":"OTHER"}`); r.Redriven != 0 || r.Skipped != 3 {
		t.Fatalf("other consumer: %+v", r)
	}
	if r := redrive(t, nc, "DLQ", `{"origin_stream":"JOBS","consumer":"W","keep":true,"seq":1}`); r.Redriven != 1 || r.Kept != 1 {
		t.Fatalf("keep: %+v", r)
	}
	if r := redrive(t, nc, "DLQ", `{"origin_stream":"JOBS","consumer":"W","keep":true,"seq":1}`); r.Redriven != 1 {
		t.Fatalf("keep twice: %+v", r) // stored once: the second is a duplicate of the first
	}
	if i, _ := dlq.Info(ctx); i.State.Msgs != 3 {
		t.Fatalf("DLQ has %d messages after keep, want 3", i.State.Msgs)
	}
	for _, bad := range []string{`{"seq":1,"from_seq":1}`, `{"from_seq":5,"to_seq":2}`, `{"rate":-1}`, `{"max":100001}`, `{"filter":"a..b"}`, `{"nope":`} {
		if r := redrive(t, nc, "DLQ", bad); r.Error == nil {
			t.Errorf("%s accepted: %+v", bad, r)
		}
	}
	if r := redrive(t, nc, "MISSING", `{}`); r.Error == nil || r.Error.ErrCode != 10059 {
		t.Fatalf("missing stream: %+v", r)
	}
	// The origin stream is gone: nothing stores what is redriven, and the
	// dead letters stay.
	if err := js.DeleteStream(ctx, "JOBS"); err != nil {
		t.Fatal(err)
	}
	r := redrive(t, nc, "DLQ", `{}`)
	if r.Redriven != 0 || len(r.Failed) != 3 {
		t.Fatalf("without the origin stream: %+v", r)
	}
	if i, _ := dlq.Info(ctx); i.State.Msgs != 3 {
		t.Fatalf("DLQ has %d messages after failed redrives, want 3", i.State.Msgs)
	}
}

// TestClientsMayNotFakeInternalAcks: $BUS.DLQ. is the server's; a client
// publishing there, or asking for replies there, is refused.
func TestClientsMayNotFakeInternalAcks(t *testing.T) {
	t.Parallel()
	s, _ := startJS(t)
	rc := dialRaw(t, s.Addr().String())
	rc.send("CONNECT {\"verbose\":false}\r\nPUB $BUS.DLQ.ACK.JOBS.W 2\r\n{}\r\n")
	rc.expect("-ERR 'Permissions Violation for Publish to \"$BUS.DLQ.ACK.JOBS.W\"'\r\n")
	rc.send("PUB jobs.x $BUS.DLQ.REDRIVEACK.DLQ.1.1 2\r\n{}\r\n")
	rc.expect("-ERR 'Permissions Violation for Publish with Reply of \"$BUS.DLQ.REDRIVEACK.DLQ.1.1\"'\r\n")
}

// A redrive reads the dead letters as the user who asks: a stream that
// holds them only through a source (no subjects of its own) is checked
// against every subject it may hold, so a user who may not read the
// dead-letter subject cannot move them through the copy.
func TestRedriveOfSourcedCopyNeedsReadRights(t *testing.T) {
	t.Parallel()
	users := []server.User{
		{Name: "admin", Password: "a"},
		{Name: "worker", Password: "w", Permissions: &server.Permissions{
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "jobs.>"}},
		}},
	}
	s := startBus(t, server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), JetStream: true,
		Authorization: server.Authorization{Users: users}})
	nc := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	deadLetterJobs(t, js, nc, 2)
	copyOf, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQCOPY", Sources: []*jetstream.StreamSource{{Name: "DLQ"}}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool {
		i, err := copyOf.Info(ctx)
		return err == nil && i.State.Msgs == 2
	})
	worker := connect(t, busURL(s), nats.UserInfo("worker", "w"))
	for _, body := range []string{`{}`, `{"filter":"dlq.jobs"}`} {
		r := redrive(t, worker, "DLQCOPY", body)
		if r.Error == nil || r.Error.Code != 403 || r.Redriven != 0 {
			t.Errorf("worker's redrive %s of a sourced copy: %+v, want 403 and nothing moved", body, r)
		}
	}
	if i, _ := copyOf.Info(ctx); i.State.Msgs != 2 {
		t.Fatalf("DLQCOPY has %d messages after refused redrives, want 2", i.State.Msgs)
	}
	if r := redrive(t, nc, "DLQCOPY", `{}`); r.Error != nil || r.Redriven != 2 {
		t.Fatalf("admin's redrive of the copy: %+v", r)
	}
}
