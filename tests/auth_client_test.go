package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/bus-dev/bus/server"
)

// tryConnect reports how a nats.go connection with opts fares against
// url: "ok" after a publish round trip, or the connect error.
func tryConnect(url string, opts ...nats.Option) string {
	opts = append(opts, nats.MaxReconnects(0), nats.Timeout(5*time.Second), nats.NoReconnect())
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) {
			return "authorization violation"
		}
		return err.Error()
	}
	defer nc.Close()
	sub, err := nc.SubscribeSync("hello")
	if err != nil {
		return "subscribe: " + err.Error()
	}
	if err := nc.Publish("hello", []byte("x")); err != nil {
		return "publish: " + err.Error()
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		return "receive: " + err.Error()
	}
	return "ok"
}

// nkeyOption signs the server's nonce with seed, as nats.Nkey with a
// seed file would.
func nkeyOption(t *testing.T, pub string, seed []byte) nats.Option {
	t.Helper()
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	return nats.Nkey(pub, kp.Sign)
}

// nats.go's UserInfo, Token and Nkey options connect to bus exactly when
// they connect to the reference, and fail with the same error.
func TestAuthNatsGoClientMatchesReference(t *testing.T) {
	t.Parallel()
	seed, pub := newNkeyUser(t)
	otherSeed, _ := newNkeyUser(t)
	for _, tc := range []struct {
		name string
		auth server.Authorization
		opts map[string][]nats.Option
	}{
		{"token", server.Authorization{Token: mustBcrypt(t, "tok")}, map[string][]nats.Option{
			"right":   {nats.Token("tok")},
			"wrong":   {nats.Token("nope")},
			"missing": nil,
		}},
		{"user", server.Authorization{User: "alice", Password: "pw"}, map[string][]nats.Option{
			"right":        {nats.UserInfo("alice", "pw")},
			"wrong":        {nats.UserInfo("alice", "nope")},
			"url userinfo": {nats.UserInfo("alice", "pw"), nats.Name("x")},
		}},
		{"users and nkeys", server.Authorization{Users: []server.User{
			{Name: "bob", Password: mustBcrypt(t, "b")},
			{Nkey: pub},
		}}, map[string][]nats.Option{
			"bob":         {nats.UserInfo("bob", "b")},
			"bob wrong":   {nats.UserInfo("bob", "c")},
			"nkey":        {nkeyOption(t, pub, seed)},
			"nkey forged": {nkeyOption(t, pub, otherSeed)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pair := startAuthPair(t, tc.auth)
			for name, opts := range tc.opts {
				got := tryConnect("nats://"+pair.bus, opts...)
				want := tryConnect("nats://"+pair.ref, opts...)
				t.Logf("%s: %s", name, got)
				if got != want {
					t.Errorf("%s: bus %q, reference %q", name, got, want)
				}
			}
		})
	}
}

// permissionErrors connects as user with nats.go, tries a publish, a
// subscribe and a queue subscribe that the user may not make, and
// describes what the client saw.
func permissionErrors(t *testing.T, url string) string {
	t.Helper()
	errs := make(chan error, 10)
	nc := connect(t, url, nats.UserInfo("u", "p"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	_ = nc.Publish("secret.x", []byte("x"))
	sub, _ := nc.SubscribeSync("secret.>")
	qsub, _ := nc.QueueSubscribeSync("jobs.x", "other")
	_ = nc.Flush()
	var out []string
	for range 3 {
		select {
		case err := <-errs:
			out = append(out, err.Error())
		case <-time.After(5 * time.Second):
			out = append(out, "no error")
		}
	}
	_, subErr := sub.NextMsg(100 * time.Millisecond)
	_, qErr := qsub.NextMsg(100 * time.Millisecond)
	out = append(out, fmt.Sprintf("sub: %v, queue sub: %v, status: %v", subErr, qErr, nc.Status()))
	return strings.Join(out, "; ")
}

// A permissions violation reaches nats.go as the reference's error,
// marks the subscription failed, and keeps the connection.
func TestAuthNatsGoPermissionsMatchReference(t *testing.T) {
	t.Parallel()
	pair := startAuthPair(t, server.Authorization{Users: []server.User{{Name: "u", Password: "p", Permissions: &server.Permissions{
		Publish:   &server.SubjectPermission{Deny: []string{"secret.>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"jobs.> workers", "_INBOX.>"}, Deny: []string{"secret.>"}},
	}}}})
	got := permissionErrors(t, "nats://"+pair.bus)
	want := permissionErrors(t, "nats://"+pair.ref)
	t.Log(got)
	if got != want {
		t.Errorf("bus:\n %s\nreference:\n %s", got, want)
	}
}
