package tests

import (
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nats-io/jwt/v2"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// In operator mode the upgrade's cookie named by jwt_cookie stands in for
// CONNECT's user JWT when CONNECT has none, as in the reference: a bearer
// JWT in the cookie is enough, any other still needs the nonce signed,
// and a JWT in CONNECT wins over the cookie.
func TestWebSocketJWTCookieMatchesReference(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	bearer := jwtOf(t, first(w.user("A", nil, func(u *jwt.UserClaims) { u.BearerToken = true })))
	signed := jwtOf(t, first(w.user("A", nil, nil)))

	opts := w.busOptions()
	opts.WebSocket = server.WebSocketOptions{JWTCookie: "nats_jwt"}
	bus, _ := startWSBus(t, opts)
	path := filepath.Join(t.TempDir(), "nats.conf")
	writeReferenceConfig(t, path, w.referenceConfig("websocket { host: 127.0.0.1, port: -1, no_tls: true, jwt_cookie: nats_jwt }"))
	ro, err := natsserver.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("reference config: %v", err)
	}
	ro.NoLog, ro.NoSigs = true, true
	startReferenceServer(t, ro)
	refWS := net.JoinHostPort("127.0.0.1", strconv.Itoa(ro.Websocket.Port))

	cookie := func(v string) http.Header { return http.Header{"Cookie": {"nats_jwt=" + v}} }
	cases := []struct {
		name    string
		header  http.Header
		connect string
	}{
		{"bearer JWT cookie", cookie(bearer), `{"verbose":false}`},
		{"signed-only JWT cookie without a signature", cookie(signed), `{"verbose":false}`},
		{"no cookie", nil, `{"verbose":false}`},
		{"garbage cookie", cookie("not-a-jwt"), `{"verbose":false}`},
		{"CONNECT's JWT wins over the cookie", cookie("not-a-jwt"), `{"verbose":false,"jwt":"` + bearer + `"}`},
		{"other cookie name", http.Header{"Cookie": {"jwt=" + bearer}}, `{"verbose":false}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := wsConnect(t, bus.WebSocketAddr().String(), tc.header, tc.connect)
			want := wsConnect(t, refWS, tc.header, tc.connect)
			if got != want {
				t.Errorf("bus %q, reference %q", got, want)
			}
		})
	}
}

// first drops the second result of a two-result call.
func first[A, B any](a A, _ B) A { return a }
