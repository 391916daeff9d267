package tests

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// wsUsers are two users for the WebSocket tests: alice may do anything,
// bob may only publish to and subscribe on "bob.>" and answer requests.
func wsUsers() server.Authorization {
	return server.Authorization{Users: []server.User{
		{Name: "alice", Password: "pa"},
		{Name: "bob", Password: "pb", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"bob.>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"bob.>", "_INBOX.>"}},
		}},
	}}
}

// startWSBus runs a bus with a plain (no_tls) WebSocket listener on a
// free port beside its client port.
func startWSBus(t *testing.T, opts server.Options) (*server.Server, string) {
	t.Helper()
	if opts.WebSocket.Port == 0 {
		opts.WebSocket.Port = -1
	}
	if opts.WebSocket.TLS.CertFile == "" {
		opts.WebSocket.NoTLS = true
	}
	opts.WebSocket.Host = "127.0.0.1"
	s := startBus(t, opts)
	scheme := "ws://"
	if !opts.WebSocket.NoTLS {
		scheme = "wss://"
	}
	return s, scheme + s.WebSocketAddr().String()
}

// TestWebSocketPubSubRequest: nats.go over ws:// publishes, subscribes
// and requests as over TCP, mixing with a TCP client in the same subject
// space, under the same users.
func TestWebSocketPubSubRequest(t *testing.T) {
	s, wsURL := startWSBus(t, server.Options{Authorization: wsUsers()})
	tcp := connect(t, "nats://alice:pa@"+s.Addr().String())
	ws := connect(t, strings.Replace(wsURL, "ws://", "ws://alice:pa@", 1))

	sub, err := ws.SubscribeSync("a.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Flush(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 200<<10) // several frames' worth, and over a read buffer
	for _, body := range []string{"hello", big} {
		if err := tcp.Publish("a.b", []byte(body)); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("ws subscriber: %v", err)
		}
		if string(m.Data) != body {
			t.Fatalf("ws got %d bytes, want %d", len(m.Data), len(body))
		}
	}
	// A TCP responder answers a WebSocket requester, and the other way.
	if _, err := tcp.Subscribe("svc.tcp", func(m *nats.Msg) { _ = m.Respond([]byte("tcp:" + string(m.Data))) }); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Subscribe("svc.ws", func(m *nats.Msg) { _ = m.Respond([]byte("ws:" + string(m.Data))) }); err != nil {
		t.Fatal(err)
	}
	_ = tcp.Flush()
	_ = ws.Flush()
	if got := mustRequest(t, ws, "svc.tcp", "q"); string(got) != "tcp:q" {
		t.Fatalf("ws→tcp request: %q", got)
	}
	if got := mustRequest(t, tcp, "svc.ws", big); string(got) != "ws:"+big {
		t.Fatalf("tcp→ws request: got %d bytes", len(got))
	}
}

// TestWebSocketPermissions: a WebSocket client has its user's
// permissions, and a bad password is refused as on TCP.
func TestWebSocketPermissions(t *testing.T) {
	_, wsURL := startWSBus(t, server.Options{Authorization: wsUsers()})
	errs := make(chan error, 4)
	bob := connect(t, strings.Replace(wsURL, "ws://", "ws://bob:pb@", 1),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err := bob.Publish("alice.x", []byte("no")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("got %v, want a permissions violation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no permissions violation for a publish bob may not make")
	}
	if err := bob.Publish("bob.x", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if err := bob.Flush(); err != nil {
		t.Fatal(err)
	}
	_, err := nats.Connect(strings.Replace(wsURL, "ws://", "ws://bob:wrong@", 1), nats.MaxReconnects(0))
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("bad password over ws: %v, want %v", err, nats.ErrAuthorization)
	}
}

// TestWebSocketJetStream: JetStream publish and fetch over ws://.
func TestWebSocketJetStream(t *testing.T) {
	_, wsURL := startWSBus(t, server.Options{JetStream: true, Authorization: wsUsers()})
	nc := connect(t, strings.Replace(wsURL, "ws://", "ws://alice:pa@", 1))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WS", Subjects: []string{"ws.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := js.Publish(ctx, "ws.x", []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "c", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(3, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for m := range batch.Messages() {
		got = append(got, m.Data()...)
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != "abc" {
		t.Fatalf("fetched %q, want abc", got)
	}
}

// TestWebSocketTLS: wss:// with the listener's own certificate, while
// the client port stays plain.
func TestWebSocketTLS(t *testing.T) {
	ca := newTestCA(t, "ws")
	cert, key := ca.serverCert(t)
	_, wssURL := startWSBus(t, server.Options{WebSocket: server.WebSocketOptions{TLS: server.TLSOptions{CertFile: cert, KeyFile: key}}})
	if !strings.HasPrefix(wssURL, "wss://") {
		t.Fatalf("url %s", wssURL)
	}
	nc := connect(t, wssURL, nats.Secure(clientTLS(t, ca, "", "")))
	sub, err := nc.SubscribeSync("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("t", []byte("secure")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "secure" {
		t.Fatalf("got %v, %v", m, err)
	}
}

// TestWebSocketConnz: a WebSocket client is listed in /connz with the
// reference's type "websocket"; a TCP client keeps "nats". /metrics
// counts the WebSocket clients among the connections.
func TestWebSocketConnz(t *testing.T) {
	s, wsURL := startWSBus(t, server.Options{HTTPPort: -1})
	connect(t, wsURL, nats.Name("over-ws"))
	connect(t, busURL(s), nats.Name("over-tcp"))
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/connz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var cz struct {
		Conns []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(body, &cz); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, c := range cz.Conns {
		types[c.Name] = c.Type
	}
	if types["over-ws"] != "websocket" || types["over-tcp"] != "nats" {
		t.Fatalf("connz types %v", types)
	}
	resp, err = http.Get("http://" + s.HTTPAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`bus_websocket_connections{server_id="` + s.ID() + `"} 1`, `bus_connections{server_id="` + s.ID() + `"} 2`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
