package tests

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
)

// The callout's reason for a refusal is the server's log line, naming
// the user and never its password (the client only gets 'Authorization
// Violation', as from the reference).
func TestAuthCalloutLogsTheReason(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	w := newCalloutWorld(t, false)
	opts := w.busOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startBus(t, opts)
	w.serve(t, busURL(s), func(*jwt.AuthorizationRequestClaims) decision {
		return decision{errText: "bad password for alice"}
	})
	if _, got := calloutClient(t, busURL(s), nats.UserInfo("alice", "hunter2")); got == "connected" {
		t.Fatal("alice got in")
	}
	eventually(t, 2*time.Second, func() bool {
		return strings.Contains(logs.String(), `reason="Auth callout service returned an error: bad password for alice"`)
	})
	if out := logs.String(); !strings.Contains(out, "user=alice") || strings.Contains(out, "hunter2") {
		t.Errorf("log:\n%s", out)
	}
}

// A reload that keeps the callout keeps the clients it let in; one that
// removes it closes them, as their answer no longer holds.
func TestAuthCalloutReload(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, false)
	opts := w.busOptions()
	opts.Host, opts.StoreDir = "127.0.0.1", t.TempDir() // as startBus sets them, for Reload
	s := startBus(t, opts)
	w.serve(t, busURL(s), appUser)
	closed := make(chan struct{})
	nc, got := calloutClient(t, busURL(s), nats.UserInfo("alice", "secret"), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if got != "connected" {
		t.Fatal(got)
	}
	opts.MaxPayload = 1 << 19 // any change
	if err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatalf("closed by a reload that keeps the callout: %v", err)
	}
	opts.Authorization.Callout = nil
	if err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("a callout user stayed after the callout was removed")
	}
}

// Many clients waiting for the service at once each get their own
// answer: the service sees each request once, for its own user key.
func TestAuthCalloutConcurrentClients(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, true)
	s := startBus(t, w.busOptions())
	svc := w.serve(t, busURL(s), func(r *jwt.AuthorizationRequestClaims) decision {
		if r.ConnectOptions.Username == "odd" {
			return decision{errText: "odd ones out"}
		}
		return decision{account: "APP"}
	})
	const n = 20
	results := make(chan string, n)
	for i := range n {
		user := "even"
		if i%2 == 1 {
			user = "odd"
		}
		go func() {
			nc, err := nats.Connect(busURL(s), nats.UserInfo(user, "x"), nats.NoReconnect())
			if err != nil {
				results <- user + " refused"
				return
			}
			nc.Close()
			results <- user + " in"
		}()
	}
	counts := map[string]int{}
	for range n {
		select {
		case r := <-results:
			counts[r]++
		case <-time.After(10 * time.Second):
			t.Fatalf("clients still waiting; so far %v", counts)
		}
	}
	if counts["even in"] != n/2 || counts["odd refused"] != n/2 {
		t.Errorf("got %v", counts)
	}
	if svc.seen() != n {
		t.Errorf("the service saw %d requests, want %d", svc.seen(), n)
	}
}

// WebSocket clients go through the callout too, which learns how they
// connect; a user the callout allows only WEBSOCKET connections gets in
// there and not on the client port.
func TestAuthCalloutWebSocketClients(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, false)
	s, wsURL := startWSBus(t, w.busOptions())
	svc := w.serve(t, busURL(s), func(*jwt.AuthorizationRequestClaims) decision {
		return decision{account: "APP", edit: func(uc *jwt.UserClaims) { uc.AllowedConnectionTypes.Add(jwt.ConnectionTypeWebsocket) }}
	})
	if _, got := calloutClient(t, wsURL, nats.UserInfo("alice", "secret")); got != "connected" {
		t.Errorf("over WebSocket: %s", got)
	}
	if typ := svc.last(t).ClientInformation.Type; typ != "websocket" {
		t.Errorf("client type %q, want websocket", typ)
	}
	if _, got := calloutClient(t, busURL(s), nats.UserInfo("alice", "secret")); got == "connected" {
		t.Error("a WebSocket-only user got in on the client port")
	}
}

// The user JWT's limits hold: here its subs limit. The reference builds
// a callout user from the JWT's permissions and connection types only
// and ignores its limits (2.15.2 lets this client make a second
// subscription); bus applies what the JWT asks for.
func TestAuthCalloutAppliesUserLimits(t *testing.T) {
	t.Parallel()
	w := newCalloutWorld(t, false)
	s := startBus(t, w.busOptions())
	w.serve(t, busURL(s), func(*jwt.AuthorizationRequestClaims) decision {
		return decision{account: "APP", edit: func(uc *jwt.UserClaims) { uc.Limits.Subs = 1 }}
	})
	handler, errs := asyncErrors()
	nc, got := calloutClient(t, busURL(s), nats.UserInfo("alice", "secret"), handler)
	if nc == nil {
		t.Fatal(got)
	}
	for _, subject := range []string{"a", "b"} {
		if _, err := nc.SubscribeSync(subject); err != nil {
			t.Fatal(err)
		}
	}
	_ = nc.Flush()
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "maximum subscriptions exceeded") {
			t.Errorf("got %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("a second subscription passed the JWT's subs limit of 1")
	}
}
