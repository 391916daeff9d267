package monitor

import (
	"net/http"
	"strings"
	"testing"
)

// The state document is built from Source's counters and JetStream
// snapshot alone: totals summed over streams, lag per stream, the
// selected stream's consumers, and what needs a login.
func TestDashboardStateFromSource(t *testing.T) {
	t.Parallel()
	src := &fakeSource{
		counters: Counters{ServerID: "NID", ServerName: "n1", Version: "2.11.0", Connections: 3, TotalConnections: 7,
			Subscriptions: 4, InMsgs: 10, OutMsgs: 20, InBytes: 100, OutBytes: 200, SlowConsumers: 1},
		js: sampleJetStream(),
	}
	m := newFakeMonitor(t, src, false)
	code, b := call(t, m, "GET", "/dashboard/api/state?stream=S", "", "", "")
	if code != http.StatusOK {
		t.Fatalf("state: %d %s", code, b)
	}
	var st dashState
	decode(t, b, &st)
	if s := st.Server; s.ID != "NID" || s.Name != "n1" || s.Version != "2.11.0" || s.Connections != 3 || s.TotalConnections != 7 ||
		s.Subscriptions != 4 || s.InMsgs != 10 || s.OutBytes != 200 || s.SlowConsumers != 1 {
		t.Errorf("server %+v", s)
	}
	js := st.JetStream
	if js == nil {
		t.Fatal("no jetstream section with JetStream on")
	}
	if js.Streams != 2 || js.Consumers != 2 || js.Messages != 6 || js.Bytes != 510 || js.Memory != 10 || js.Storage != 500 ||
		js.APITotal != 9 || js.APIErrors != 2 || js.DeadLettered != 3 || js.Damaged != 1 || js.MaxMemory != 1<<30 || js.MaxStorage != 1<<40 {
		t.Errorf("jetstream %+v", js)
	}
	if len(st.Streams) != 2 || st.Streams[0].Name != "M" || st.Streams[0].Storage != "memory" || st.Streams[1].Storage != "file" {
		t.Fatalf("streams %+v", st.Streams)
	}
	if s := st.Streams[1]; s.Lag != 5 || s.DeadLettered != 3 || s.Consumers != 2 || !s.DLQ || s.FirstTime != 1_700_000_000_000 {
		t.Errorf("stream S %+v", s)
	}
	sel := st.Selected
	if sel == nil || sel.Stream != "S" || len(sel.Consumers) != 2 {
		t.Fatalf("selected %+v", sel)
	}
	if a, b := sel.Consumers[0], sel.Consumers[1]; a.Name != "a" || a.NumPending != 4 || a.Delivered != 1 || a.LastActive != 1_700_000_000_000 ||
		b.AckFloor != 3 || b.LastActive != 1_700_000_060_000 {
		t.Errorf("consumers %+v", sel.Consumers)
	}
	if st.Auth != (dashAuth{}) {
		t.Errorf("auth %+v without authorization", st.Auth)
	}
	if st.SampleInterval != lagInterval.Milliseconds() {
		t.Errorf("sample interval %d", st.SampleInterval)
	}
}

func TestDashboardStateWithoutJetStream(t *testing.T) {
	t.Parallel()
	src := &fakeSource{counters: Counters{ServerID: "NID"}, users: map[string]fakeUser{}}
	m := newFakeMonitor(t, src, true)
	code, b := call(t, m, "GET", "/dashboard/api/state", "", "", "")
	if code != http.StatusUnauthorized {
		t.Fatalf("state behind http_auth without a login: %d %s", code, b)
	}
	src.users["ann"] = fakeUser{password: "pw"}
	code, b = call(t, m, "GET", "/dashboard/api/state", "", "ann", "pw")
	if code != http.StatusOK {
		t.Fatalf("state: %d %s", code, b)
	}
	var st dashState
	decode(t, b, &st)
	if st.JetStream != nil || len(st.Streams) != 0 || st.Selected != nil {
		t.Errorf("JetStream off, yet %+v", st)
	}
	if st.Auth != (dashAuth{ActionsNeedLogin: true, MessagesNeedLogin: true, ReadsNeedLogin: true}) {
		t.Errorf("auth %+v with authorization and http_auth", st.Auth)
	}
	if strings.Contains(string(b), "pw") {
		t.Errorf("the password is in the state: %s", b)
	}
	code, b = call(t, m, "GET", "/dashboard/api/state?since=soon", "", "ann", "pw")
	if code != http.StatusBadRequest || !strings.Contains(errorText(t, b), "since") {
		t.Errorf("since=soon: %d %s", code, b)
	}
}
