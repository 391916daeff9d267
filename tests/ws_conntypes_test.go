package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// connTypeUsers are users limited to one or more connection types, in
// the cases nats-server accepts, and one without limits.
func connTypeUsers() []server.User {
	return []server.User{
		{Name: "tcp", Password: "p", AllowedConnectionTypes: []string{"STANDARD"}},
		{Name: "ws", Password: "p", AllowedConnectionTypes: []string{"websocket"}},
		{Name: "both", Password: "p", AllowedConnectionTypes: []string{"STANDARD", "WEBSOCKET"}},
		{Name: "leaf", Password: "p", AllowedConnectionTypes: []string{"LEAFNODE"}},
		{Name: "mqtt", Password: "p", AllowedConnectionTypes: []string{"MQTT", "MQTT_WS"}},
		{Name: "any", Password: "p"},
	}
}

// connectOutcome says how a connection attempt ended: "ok" or
// "authorization violation" or the error. The reference closes a
// refused WebSocket connection at once, and nats.go may still be
// writing then: it sees the socket's error in place of the -ERR. Either
// is the refusal.
func connectOutcome(url string, opts ...nats.Option) string {
	nc, err := nats.Connect(url, append(opts, nats.NoReconnect(), nats.Timeout(5*time.Second))...)
	switch {
	case err == nil:
		err = nc.Flush()
		nc.Close()
		if err == nil {
			return "ok"
		}
	case errors.Is(err, nats.ErrAuthorization), strings.Contains(err.Error(), "broken pipe"),
		strings.Contains(err.Error(), "connection reset"):
		return "authorization violation"
	}
	return err.Error()
}

// A user's allowed_connection_types let it in through the listeners they
// name and refuse it, as an authorization violation, through the
// others, as in the reference; the no_auth_user is limited the same way.
func TestAllowedConnectionTypesMatchReference(t *testing.T) {
	outcomes := func(tcp, ws string, noAuth bool) []string {
		var out []string
		for _, u := range connTypeUsers() {
			for _, via := range []struct{ name, url string }{{"tcp", "nats://" + tcp}, {"ws", "ws://" + ws}} {
				out = append(out, fmt.Sprintf("%s over %s: %s", u.Name, via.name, connectOutcome(via.url, nats.UserInfo(u.Name, "p"))))
			}
		}
		if noAuth {
			out = append(out, "no credentials over tcp: "+connectOutcome("nats://"+tcp), "no credentials over ws: "+connectOutcome("ws://"+ws))
		}
		return out
	}
	for _, noAuthUser := range []string{"", "ws"} {
		t.Run("no_auth_user="+noAuthUser, func(t *testing.T) {
			pair := startWSPair(t, server.WebSocketOptions{}, server.Authorization{Users: connTypeUsers(), NoAuthUser: noAuthUser})
			sameOutcomes(t, outcomes(pair.ns.Addr().String(), pair.ref, noAuthUser != ""),
				outcomes(pair.srv.Addr().String(), pair.bus, noAuthUser != ""))
		})
	}
}

// A reload that takes WEBSOCKET from a user closes that user's WebSocket
// connections with an authorization violation and keeps its TCP ones.
func TestAllowedConnectionTypesReload(t *testing.T) {
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), Authorization: server.Authorization{Users: connTypeUsers()},
		WebSocket: server.WebSocketOptions{Host: "127.0.0.1", Port: -1, NoTLS: true}}
	s, wsURL := startWSBus(t, opts)
	closed := make(chan error, 1)
	ws := connect(t, wsURL, nats.UserInfo("both", "p"), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case closed <- err:
			default:
			}
		}))
	tcp := connect(t, "nats://"+s.Addr().String(), nats.UserInfo("both", "p"), nats.NoReconnect())
	reload := opts
	reload.Authorization.Users = connTypeUsers()
	reload.Authorization.Users[2].AllowedConnectionTypes = []string{"STANDARD"}
	if err := s.Reload(reload); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-closed:
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("the WebSocket connection heard %v, want an authorization violation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the WebSocket connection was not closed by the reload")
	}
	eventually(t, 5*time.Second, ws.IsClosed)
	if err := tcp.Flush(); err != nil {
		t.Fatalf("the TCP connection after the reload: %v", err)
	}

	// The websocket block itself needs a restart, as in the reference.
	reload.WebSocket.Compression = true
	if err := s.Reload(reload); !errors.Is(err, server.ErrReloadNeedsRestart) || !strings.Contains(err.Error(), "websocket") {
		t.Fatalf("reloading the websocket block: %v", err)
	}
}

// A connection type the reference does not know is refused by name.
func TestAllowedConnectionTypesUnknownIsRefused(t *testing.T) {
	_, err := server.New(server.Options{Authorization: server.Authorization{Users: []server.User{
		{Name: "a", Password: "p", AllowedConnectionTypes: []string{"STANDARD", "HTTP"}}}}})
	if err == nil || !strings.Contains(err.Error(), `allowed_connection_types: invalid connection types ["HTTP"]`) {
		t.Fatalf("got %v", err)
	}
}
