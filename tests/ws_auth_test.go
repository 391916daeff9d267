package tests

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// wsDial upgrades to addr with extra request headers (cookies) and
// returns the NATS stream inside, read line by line.
func wsDial(t *testing.T, addr string, header http.Header) (net.Conn, *bufio.Reader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc, _, err := websocket.Dial(ctx, "ws://"+addr, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		t.Fatalf("%s: %v", addr, err)
	}
	nc := websocket.NetConn(context.Background(), wc, websocket.MessageBinary)
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	return nc, bufio.NewReader(nc)
}

// wsConnect sends CONNECT (and a PING) over a raw stream and says how
// the server answered: "ok" for PONG, else the -ERR line.
func wsConnect(t *testing.T, addr string, header http.Header, connect string) string {
	t.Helper()
	nc, r := wsDial(t, addr, header)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("%s: first line %q %v", addr, line, err)
	}
	if _, err := fmt.Fprintf(nc, "CONNECT %s\r\nPING\r\n", connect); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadString('\n')
	switch {
	case err != nil:
		return err.Error()
	case line == "PONG\r\n":
		return "ok"
	}
	return strings.TrimSpace(line)
}

// Cookies of the upgrade named by user_cookie, pass_cookie and
// token_cookie stand in for CONNECT's credentials when it has none, and
// CONNECT's win when it has them, as in the reference.
func TestWebSocketCookieAuthMatchesReference(t *testing.T) {
	cookies := server.WebSocketOptions{UserCookie: "nats_user", PassCookie: "nats_pass"}
	users := startWSPair(t, cookies, wsUsers())
	token := startWSPair(t, server.WebSocketOptions{TokenCookie: "nats_token"}, server.Authorization{Token: "t0k"})
	cookie := func(kv string) http.Header { return http.Header{"Cookie": {kv}} }
	cases := []struct {
		name    string
		pair    wsPair
		header  http.Header
		connect string
	}{
		{"user and pass cookies", users, cookie("nats_user=alice; nats_pass=pa"), `{"verbose":false}`},
		{"wrong pass cookie", users, cookie("nats_user=alice; nats_pass=no"), `{"verbose":false}`},
		{"user cookie, pass in CONNECT", users, cookie("nats_user=alice"), `{"verbose":false,"pass":"pa"}`},
		{"CONNECT wins over cookies", users, cookie("nats_user=alice; nats_pass=no"), `{"verbose":false,"user":"bob","pass":"pb"}`},
		{"other cookies only", users, cookie("session=abc"), `{"verbose":false}`},
		{"token cookie", token, cookie("nats_token=t0k"), `{"verbose":false}`},
		{"wrong token cookie", token, cookie("nats_token=nope"), `{"verbose":false}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref := wsConnect(t, tc.pair.ref, tc.header, tc.connect)
			got := wsConnect(t, tc.pair.bus, tc.header, tc.connect)
			if got != ref {
				t.Fatalf("bus %q, reference %q", got, ref)
			}
		})
	}
}

// The block's authorization replaces the top-level token for WebSocket
// clients, and its no_auth_user is who a WebSocket client without
// credentials is; TCP clients keep the top-level settings.
func TestWebSocketAuthOverridesMatchReference(t *testing.T) {
	override := startWSPair(t, server.WebSocketOptions{Authorization: server.WebSocketAuth{User: "web", Password: "pw"}},
		server.Authorization{Token: "tcp-token"})
	noAuth := startWSPair(t, server.WebSocketOptions{NoAuthUser: "bob"}, wsUsers())
	outcomes := func(tcp, ws string) []string {
		try := connectOutcome
		return []string{
			"ws user: " + try("ws://"+ws, nats.UserInfo("web", "pw")),
			"ws token: " + try("ws://"+ws, nats.Token("tcp-token")),
			"ws none: " + try("ws://"+ws),
			"ws bob: " + try("ws://"+ws, nats.UserInfo("bob", "pb")),
			"tcp user: " + try("nats://"+tcp, nats.UserInfo("web", "pw")),
			"tcp token: " + try("nats://"+tcp, nats.Token("tcp-token")),
			"tcp none: " + try("nats://"+tcp),
		}
	}
	for name, p := range map[string]wsPair{"authorization": override, "no_auth_user": noAuth} {
		t.Run(name, func(t *testing.T) {
			sameOutcomes(t, outcomes(p.ns.Addr().String(), p.ref), outcomes(p.srv.Addr().String(), p.bus))
		})
	}
}

// The block's headers are in the upgrade's response, as in the
// reference.
func TestWebSocketHeadersMatchReference(t *testing.T) {
	p := startWSPair(t, server.WebSocketOptions{Headers: map[string]string{
		"Strict-Transport-Security": "max-age=31536000", "x-served-by": "edge-1"}}, server.Authorization{})
	for who, addr := range map[string]string{"ref": p.ref, "bus": p.bus} {
		resp := wsHandshake(t, addr, "GET", nil)
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("%s: status %d", who, resp.StatusCode)
		}
		if resp.Header.Get("Strict-Transport-Security") != "max-age=31536000" || resp.Header.Get("X-Served-By") != "edge-1" {
			t.Errorf("%s: response headers %v", who, resp.Header)
		}
	}
}

// The block's ping_interval paces the PINGs WebSocket clients get, in
// place of the top-level one (two minutes here).
func TestWebSocketPingIntervalMatchesReference(t *testing.T) {
	p := startWSPair(t, server.WebSocketOptions{PingInterval: 200 * time.Millisecond}, server.Authorization{})
	for who, addr := range map[string]string{"ref": p.ref, "bus": p.bus} {
		nc, r := wsDial(t, addr, nil)
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprint(nc, "CONNECT {\"verbose\":false}\r\n"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for pings := 0; pings < 3; {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: after %d PINGs in %v: %v", who, pings, time.Since(start), err)
			}
			if line == "PING\r\n" {
				pings++
				if _, err := fmt.Fprint(nc, "PONG\r\n"); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// The block's own user owns what it makes in JetStream like any user:
// its stream and consumer serve it, and a reload (which checks owners'
// rights again) leaves them so.
func TestWebSocketAuthUserOwnsItsStreams(t *testing.T) {
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), JetStream: true,
		Authorization: server.Authorization{Token: "tcp-token"},
		WebSocket:     server.WebSocketOptions{Host: "127.0.0.1", Port: -1, NoTLS: true, Authorization: server.WebSocketAuth{User: "web", Password: "pw"}}}
	s, wsURL := startWSBus(t, opts)
	nc := connect(t, wsURL, nats.UserInfo("web", "pw"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WEB", Subjects: []string{"web.>"}})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "page", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	reload := opts
	reload.Authorization.Token = "another-tcp-token" // authorization changed: owners are checked again
	if err := s.Reload(reload); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "web.click", []byte("c1")); err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil || string(m.Data()) != "c1" {
		t.Fatalf("the owner's consumer after a reload: %v %v", m, err)
	}
}
