package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// dash is a client of one server's dashboard.
type dash struct {
	t    *testing.T
	base string
}

func startDashboard(t *testing.T, opts server.Options) (*server.Server, dash) {
	t.Helper()
	opts.HTTPPort = -1
	s := startBus(t, opts)
	return s, dash{t, "http://" + s.HTTPAddr().String()}
}

// call sends a request and returns the status and the body; hdr are
// extra header lines "Key: value"; user and pass, when user is not
// empty, go as HTTP Basic credentials.
func (d dash) call(method, path, body, user, pass string, hdr ...string) (int, []byte, http.Header) {
	d.t.Helper()
	req, err := http.NewRequest(method, d.base+path, strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header
}

// act POSTs an action as the dashboard page does.
func (d dash) act(path, body, user, pass string) (int, []byte) {
	d.t.Helper()
	code, b, _ := d.call("POST", "/dashboard/api/"+path, body, user, pass, "X-Bus-Dashboard: 1", "Content-Type: application/json")
	return code, b
}

func (d dash) getJSON(path string, v any) {
	d.t.Helper()
	code, b, _ := d.call("GET", path, "", "", "")
	if code != http.StatusOK {
		d.t.Fatalf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		d.t.Fatalf("GET %s: %v in %s", path, err, b)
	}
}

// errorText is the description of a dashboard error answer.
func errorText(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Description == "" {
		t.Fatalf("not a JSON error: %s (%v)", b, err)
	}
	return e.Error.Description
}

func TestDashboardServesItsPage(t *testing.T) {
	t.Parallel()
	_, d := startDashboard(t, server.Options{})
	code, body, h := d.call("GET", "/", "", "", "")
	if code != 200 || !strings.Contains(string(body), "<title>bus dashboard</title>") || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s %q", code, h.Get("Content-Type"), body)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	for _, path := range []string{"/dashboard/assets/app.js", "/dashboard/assets/style.css"} {
		if code, body, _ := d.call("GET", path, "", "", ""); code != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d", path, code)
		}
	}
	for _, path := range []string{"/nothing", "/dashboard/assets/missing.js"} {
		if code, _, _ := d.call("GET", path, "", "", ""); code != 404 {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
	// Without JetStream the state has the server only.
	var st map[string]any
	d.getJSON("/dashboard/api/state", &st)
	if _, ok := st["jetstream"]; ok || st["server"] == nil {
		t.Fatalf("state without JetStream: %v", st)
	}
	if code, b, _ := d.call("GET", "/dashboard/api/state?since=soon", "", "", ""); code != 400 || !strings.Contains(errorText(t, b), "since") {
		t.Fatalf("bad since: %d %s", code, b)
	}
}

type dashStateDoc struct {
	Server struct {
		Version     string `json:"version"`
		Connections int    `json:"connections"`
		InMsgs      int64  `json:"in_msgs"`
	} `json:"server"`
	JetStream *struct {
		Streams   int `json:"streams"`
		Consumers int `json:"consumers"`
	} `json:"jetstream"`
	Streams []struct {
		Name      string `json:"name"`
		Messages  uint64 `json:"messages"`
		LastSeq   uint64 `json:"last_seq"`
		Consumers int    `json:"consumers"`
		Lag       uint64 `json:"lag"`
		DLQ       bool   `json:"dlq"`
		Accepted  uint64 `json:"accepted"`
	} `json:"streams"`
	Selected *struct {
		Stream    string `json:"stream"`
		Consumers []struct {
			Name         string `json:"name"`
			NumPending   uint64 `json:"num_pending"`
			DeadLettered int64  `json:"dead_lettered"`
		} `json:"consumers"`
		Lag map[string][][2]int64 `json:"lag"`
	} `json:"selected"`
	RatesIn []([2]int64) `json:"rates_in"`
}

type dashMessages struct {
	Messages []struct {
		Seq        uint64 `json:"seq"`
		Subject    string `json:"subject"`
		Headers    []struct{ Key, Value string }
		DeadLetter *struct {
			Reason, Stream, Subject, Consumer, Deliveries string
		} `json:"dead_letter"`
		Payload struct {
			Encoding  string `json:"encoding"`
			Text      string `json:"text"`
			Size      int    `json:"size"`
			Truncated bool   `json:"truncated"`
		} `json:"payload"`
	} `json:"messages"`
	NextSeq uint64 `json:"next_seq"`
}

// The state lists streams with their numbers and which are dead-letter
// streams; a selected stream brings its consumers and their lag.
func TestDashboardStateAndMessages(t *testing.T) {
	t.Parallel()
	s, d := startDashboard(t, server.Options{JetStream: true})
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadLetterJobs(t, js, nc, 3)
	ctx := ctxT(t)
	if _, err := js.Publish(ctx, "jobs.bin", []byte{0, 1, 2, 0xff}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "jobs.big", []byte(strings.Repeat("é", 1000))); err != nil {
		t.Fatal(err)
	}

	var st dashStateDoc
	d.getJSON("/dashboard/api/state?stream=JOBS", &st)
	if st.Server.Version == "" || st.Server.Connections < 1 || st.JetStream == nil || st.JetStream.Streams != 2 || st.JetStream.Consumers != 1 {
		t.Fatalf("state: %+v", st)
	}
	byName := map[string]int{}
	for i, x := range st.Streams {
		byName[x.Name] = i
	}
	jobs, dlq := st.Streams[byName["JOBS"]], st.Streams[byName["DLQ"]]
	if jobs.Messages != 5 || jobs.Consumers != 1 || jobs.Lag != 2 || jobs.DLQ || jobs.Accepted != 5 {
		t.Errorf("JOBS: %+v", jobs)
	}
	if dlq.Messages != 3 || !dlq.DLQ {
		t.Errorf("DLQ: %+v", dlq)
	}
	if st.Selected == nil || st.Selected.Stream != "JOBS" || len(st.Selected.Consumers) != 1 ||
		st.Selected.Consumers[0].Name != "W" || st.Selected.Consumers[0].NumPending != 2 || st.Selected.Consumers[0].DeadLettered != 3 {
		t.Fatalf("selected: %+v", st.Selected)
	}
	if _, ok := st.Selected.Lag["W"]; !ok && len(st.Selected.Lag) != 0 {
		t.Errorf("lag of another consumer: %v", st.Selected.Lag)
	}

	// The dead letters, with what their headers say.
	var ms dashMessages
	d.getJSON("/dashboard/api/streams/DLQ/messages?limit=2", &ms)
	if len(ms.Messages) != 2 || ms.NextSeq != 3 {
		t.Fatalf("first page: %+v", ms)
	}
	m := ms.Messages[0]
	if m.DeadLetter == nil || m.DeadLetter.Stream != "JOBS" || m.DeadLetter.Subject != "jobs.0" || m.DeadLetter.Consumer != "W" ||
		m.DeadLetter.Deliveries != "1" || m.DeadLetter.Reason != "terminated: bad input" || m.Payload.Text != "0" || m.Payload.Encoding != "text" {
		t.Fatalf("dead letter: %+v", m)
	}
	d.getJSON("/dashboard/api/streams/DLQ/messages?from=3", &ms)
	if len(ms.Messages) != 1 || ms.Messages[0].Seq != 3 || ms.NextSeq != 0 {
		t.Fatalf("second page: %+v", ms)
	}

	// Binary payloads are shown in hex, long ones cut on a character.
	d.getJSON("/dashboard/api/streams/JOBS/messages?from=4", &ms)
	if len(ms.Messages) != 2 {
		t.Fatalf("JOBS from 4: %+v", ms)
	}
	bin, big := ms.Messages[0].Payload, ms.Messages[1].Payload
	if bin.Encoding != "hex" || !strings.Contains(bin.Text, "00 01 02 ff") || bin.Size != 4 {
		t.Errorf("binary payload: %+v", bin)
	}
	if big.Encoding != "text" || !big.Truncated || big.Size != 2000 || len(big.Text) != 1024 || strings.ContainsRune(big.Text, '\uFFFD') {
		t.Errorf("long payload: truncated %v, size %d, %d bytes shown", big.Truncated, big.Size, len(big.Text))
	}
	var whole struct {
		Payload struct {
			Text      string `json:"text"`
			Truncated bool   `json:"truncated"`
		} `json:"payload"`
	}
	d.getJSON("/dashboard/api/streams/JOBS/messages/5", &whole)
	if whole.Payload.Truncated || len(whole.Payload.Text) != 2000 {
		t.Errorf("show all: truncated %v, %d bytes", whole.Payload.Truncated, len(whole.Payload.Text))
	}

	for path, want := range map[string]int{
		"/dashboard/api/streams/NOPE/messages":            404,
		"/dashboard/api/streams/JOBS/messages/99":         404,
		"/dashboard/api/streams/JOBS/messages/0":          400,
		"/dashboard/api/streams/JOBS/messages/x":          400,
		"/dashboard/api/streams/a.b/messages":             400,
		"/dashboard/api/streams/%3E/messages":             400,
		"/dashboard/api/streams/JOBS/messages?limit=many": 400,
	} {
		if code, b, _ := d.call("GET", path, "", "", ""); code != want {
			t.Errorf("GET %s: %d %s, want %d", path, code, b, want)
		} else {
			errorText(t, b)
		}
	}
}

// Actions without authorization configured: open, but only from the
// dashboard's page (the header) and never from another origin.
func TestDashboardActionsAndCSRFGuard(t *testing.T) {
	t.Parallel()
	s, d := startDashboard(t, server.Options{JetStream: true})
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	jobs, dlq := deadLetterJobs(t, js, nc, 4)
	ctx := ctxT(t)

	// The guard first: no header, another origin, a cross-site fetch.
	for _, hdr := range [][]string{
		nil,
		{"X-Bus-Dashboard: 1", "Origin: https://evil.example"},
		{"X-Bus-Dashboard: 1", "Sec-Fetch-Site: cross-site"},
	} {
		code, b, _ := d.call("POST", "/dashboard/api/streams/DLQ/purge", "", "", "", hdr...)
		if code != 403 {
			t.Fatalf("purge with %v: %d %s, want 403", hdr, code, b)
		}
		errorText(t, b)
	}
	if code, _, _ := d.call("GET", "/dashboard/api/streams/DLQ/purge", "", "", ""); code != 405 {
		t.Errorf("GET of an action: %d, want 405", code)
	}

	// Redrive one, delete one, redrive the rest.
	code, b := d.act("streams/DLQ/redrive", `{"seq":2}`, "", "")
	if code != 200 || !strings.Contains(string(b), `"redriven":1`) {
		t.Fatalf("redrive one: %d %s", code, b)
	}
	if code, b := d.act("streams/DLQ/messages/1/delete", "", "", ""); code != 200 {
		t.Fatalf("delete: %d %s", code, b)
	}
	if code, b := d.act("streams/DLQ/messages/1/delete", "", "", ""); code != 400 || !strings.Contains(errorText(t, b), "no message") {
		t.Fatalf("delete again: %d %s", code, b)
	}
	code, b = d.act("streams/DLQ/redrive", "", "", "")
	if code != 200 || !strings.Contains(string(b), `"redriven":2`) || !strings.Contains(string(b), `"next_seq":0`) {
		t.Fatalf("redrive all: %d %s", code, b)
	}
	if i, _ := jobs.Info(ctx); i.State.Msgs != 7 {
		t.Errorf("JOBS has %d messages, want 4 and 3 redriven", i.State.Msgs)
	}
	if i, _ := dlq.Info(ctx); i.State.Msgs != 0 {
		t.Errorf("DLQ has %d messages", i.State.Msgs)
	}
	code, b = d.act("streams/JOBS/purge", "", "", "")
	if code != 200 || !strings.Contains(string(b), `"purged":7`) {
		t.Fatalf("purge: %d %s", code, b)
	}
	for path, want := range map[string]int{
		"streams/NOPE/purge":             404,
		"streams/a*b/purge":              400,
		"streams/JOBS/messages/x/delete": 400,
	} {
		if code, b := d.act(path, "", "", ""); code != want {
			t.Errorf("POST %s: %d %s, want %d", path, code, b, want)
		}
	}
	if code, b := d.act("streams/DLQ/redrive", `{"seq":"two"}`, "", ""); code != 400 {
		t.Errorf("bad body: %d %s", code, b)
	}
	if code, b := d.act("streams/DLQ/redrive", `{"seq":1`+strings.Repeat(" ", 70<<10)+`}`, "", ""); code != 413 {
		t.Errorf("huge body: %d %s", code, b)
	}
}

// With authorization, actions need a configured user whose permissions
// allow the action's API subject; the redrive goes through the redrive
// API's own checks as that user.
func TestDashboardActionsNeedAnAllowedUser(t *testing.T) {
	t.Parallel()
	users := []server.User{
		{Name: "admin", Password: mustBcrypt(t, "s3cret")},
		{Name: "viewer", Password: "v", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Deny: []string{"$JS.API.STREAM.PURGE.>", "$BUS.API.>"}},
		}},
		// May redrive, but not publish where the dead letters go back.
		{Name: "mover", Password: "m", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{"$BUS.API.DLQ.REDRIVE.DLQ"}},
		}},
	}
	s, d := startDashboard(t, server.Options{JetStream: true, Authorization: server.Authorization{Users: users}})
	nc := connect(t, busURL(s), nats.UserInfo("admin", "s3cret"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadLetterJobs(t, js, nc, 2)

	// Reads stay open without http_auth.
	var st dashStateDoc
	d.getJSON("/dashboard/api/state", &st)
	if len(st.Streams) != 2 {
		t.Fatalf("streams: %+v", st.Streams)
	}
	for _, tc := range []struct {
		name, user, pass string
		want             int
		says             string
	}{
		{"no credentials", "", "", 401, "log in"},
		{"wrong password", "admin", "guess", 401, "log in"},
		{"unknown user", "root", "s3cret", 401, "log in"},
		{"not allowed", "viewer", "v", 403, `user "viewer" may not publish to $JS.API.STREAM.PURGE.JOBS`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := d.act("streams/JOBS/purge", "", tc.user, tc.pass)
			if code != tc.want || !strings.Contains(errorText(t, b), tc.says) {
				t.Fatalf("%d %s, want %d saying %q", code, b, tc.want, tc.says)
			}
		})
	}
	code, b := d.act("streams/DLQ/redrive", `{"seq":1}`, "mover", "m")
	if code != 200 || !strings.Contains(string(b), "permission denied to publish to jobs.0") {
		t.Fatalf("mover's redrive: %d %s, want the redrive API's permission failure", code, b)
	}
	if code, b := d.act("streams/DLQ/redrive", `{"seq":1}`, "admin", "s3cret"); code != 200 || !strings.Contains(string(b), `"redriven":1`) {
		t.Fatalf("admin's redrive: %d %s", code, b)
	}
	if code, b := d.act("streams/JOBS/messages/1/delete", "", "viewer", "v"); code != 200 {
		t.Fatalf("viewer may delete: %d %s", code, b)
	}
	if code, b := d.act("streams/JOBS/purge", "", "admin", "s3cret"); code != 200 {
		t.Fatalf("admin's purge: %d %s", code, b)
	}
}

// A token is checked as the password, whatever the user name.
func TestDashboardActionsWithToken(t *testing.T) {
	t.Parallel()
	s, d := startDashboard(t, server.Options{JetStream: true, Authorization: server.Authorization{Token: "tok"}})
	nc := connect(t, busURL(s), nats.Token("tok"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	if code, _ := d.act("streams/S/purge", "", "x", "nope"); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if code, b := d.act("streams/S/purge", "", "anyone", "tok"); code != 200 {
		t.Fatalf("token: %d %s", code, b)
	}
}

// With http_auth, every read but /healthz needs credentials too, and
// messages are read with the user's own rights.
func TestDashboardHTTPAuthProtectsReads(t *testing.T) {
	t.Parallel()
	users := []server.User{
		{Name: "admin", Password: "a"},
		{Name: "ops", Password: "o", Permissions: &server.Permissions{
			Subscribe: &server.SubjectPermission{Deny: []string{"dlq.>"}},
		}},
	}
	s, d := startDashboard(t, server.Options{JetStream: true, HTTPAuth: true, Authorization: server.Authorization{Users: users}})
	nc := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadLetterJobs(t, js, nc, 1)

	for _, path := range []string{"/", "/varz", "/jsz", "/dashboard/api/state"} {
		code, b, h := d.call("GET", path, "", "", "")
		if code != 401 {
			t.Fatalf("GET %s without credentials: %d", path, code)
		}
		errorText(t, b)
		if asks := h.Get("WWW-Authenticate") != ""; asks == strings.HasPrefix(path, "/dashboard/api/") {
			t.Errorf("GET %s: WWW-Authenticate %q", path, h.Get("WWW-Authenticate"))
		}
		if code, _, _ := d.call("GET", path, "", "admin", "a"); code != 200 {
			t.Errorf("GET %s as admin: %d", path, code)
		}
	}
	if code, _, _ := d.call("GET", "/healthz", "", "", ""); code != 200 {
		t.Errorf("/healthz needs credentials: %d", code)
	}
	if code, b, _ := d.call("GET", "/dashboard/api/streams/DLQ/messages", "", "ops", "o"); code != 403 || !strings.Contains(errorText(t, b), `may not read "dlq.jobs"`) {
		t.Errorf("ops reads the DLQ: %d %s", code, b)
	}
	if code, b, _ := d.call("GET", "/dashboard/api/streams/DLQ/messages", "", "admin", "a"); code != 200 || !strings.Contains(string(b), "Bus-Dlq-Reason") {
		t.Errorf("admin reads the DLQ: %d %s", code, b)
	}

	if _, err := server.New(server.Options{HTTPAuth: true}); err == nil || !strings.Contains(err.Error(), "http auth") {
		t.Errorf("http auth without authorization: %v", err)
	}
}
