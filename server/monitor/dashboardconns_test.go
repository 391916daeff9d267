package monitor

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The state lists the open connections with their type and, for an
// MQTT client, its client id; the server section splits the count by
// MQTT and WebSocket.
func TestDashboardStateListsConnections(t *testing.T) {
	t.Parallel()
	start := time.UnixMilli(1_700_000_000_000).UTC()
	src := &fakeSource{
		counters: Counters{ServerID: "NID", Connections: 3, MQTTConnections: 1, WebSocketConnections: 1},
		conns: []*ConnInfo{
			{Cid: 1, Type: "nats", Name: "orders-svc", IP: "10.0.0.1", Port: 40001, Start: start, NumSubs: 2, InMsgs: 5, OutMsgs: 6},
			{Cid: 2, Type: "websocket", Name: "browser", IP: "10.0.0.2", Port: 40002, Start: start},
			{Cid: 3, Type: "mqtt", MQTTClient: "sensor-7", IP: "10.0.0.3", Port: 40003, Start: start, NumSubs: 1, InMsgs: 9},
		},
	}
	m := newFakeMonitor(t, src, false)
	code, b := call(t, m, "GET", "/dashboard/api/state", "", "", "")
	if code != http.StatusOK {
		t.Fatalf("state: %d %s", code, b)
	}
	var st dashState
	decode(t, b, &st)
	if s := st.Server; s.Connections != 3 || s.MQTTConnections != 1 || s.WebSocketConnections != 1 {
		t.Errorf("server connections %+v", s)
	}
	want := []dashConn{
		{Cid: 1, Type: "nats", Name: "orders-svc", IP: "10.0.0.1", Port: 40001, Start: 1_700_000_000_000, Subscriptions: 2, InMsgs: 5, OutMsgs: 6},
		{Cid: 2, Type: "websocket", Name: "browser", IP: "10.0.0.2", Port: 40002, Start: 1_700_000_000_000},
		{Cid: 3, Type: "mqtt", MQTTClient: "sensor-7", IP: "10.0.0.3", Port: 40003, Start: 1_700_000_000_000, Subscriptions: 1, InMsgs: 9},
	}
	if fmt.Sprint(st.Connections) != fmt.Sprint(want) || st.ConnectionsOmitted != 0 {
		t.Errorf("connections %+v (omitted %d), want %+v", st.Connections, st.ConnectionsOmitted, want)
	}
	if !strings.Contains(string(b), `"mqtt_client":"sensor-7"`) || strings.Count(string(b), `"mqtt_client"`) != 1 {
		t.Errorf("mqtt_client is not on the MQTT connection alone: %s", b)
	}
}

// More connections than the state lists: the first dashMaxConns by cid,
// and the rest counted.
func TestDashboardStateCutsConnections(t *testing.T) {
	t.Parallel()
	src := &fakeSource{counters: Counters{ServerID: "NID"}}
	for i := range dashMaxConns + 50 {
		src.conns = append(src.conns, &ConnInfo{Cid: uint64(i + 1), Type: "mqtt", MQTTClient: fmt.Sprint("dev-", i+1)})
	}
	m := newFakeMonitor(t, src, false)
	var st dashState
	_, b := call(t, m, "GET", "/dashboard/api/state", "", "", "")
	decode(t, b, &st)
	if len(st.Connections) != dashMaxConns || st.ConnectionsOmitted != 50 || st.Connections[dashMaxConns-1].MQTTClient != fmt.Sprint("dev-", dashMaxConns) {
		t.Errorf("%d connections listed, %d omitted", len(st.Connections), st.ConnectionsOmitted)
	}

	// A Source that cannot list them: the state still serves, with none.
	src.conns, src.connzErr = nil, errors.New("fake: no connz")
	code, b := call(t, m, "GET", "/dashboard/api/state", "", "", "")
	if code != http.StatusOK || !strings.Contains(string(b), `"connections":[]`) {
		t.Errorf("state without connz: %d %s", code, b)
	}
}
