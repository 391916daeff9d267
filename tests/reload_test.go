package tests

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// reloadUsers is the authorization before and after the reload: alice
// keeps her name and password but loses foo.>, bob is removed, dave gets
// a new password, carol is new.
func reloadUsers(after bool) server.Authorization {
	foo := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"foo.>", "_INBOX.>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"foo.>", "bar.>", "_INBOX.>"}},
	}
	bar := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"bar.>", "_INBOX.>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"bar.>", "_INBOX.>"}},
	}
	if !after {
		return server.Authorization{Users: []server.User{
			{Name: "alice", Password: "a", Permissions: foo},
			{Name: "bob", Password: "b"},
			{Name: "dave", Password: "d"},
		}}
	}
	return server.Authorization{Users: []server.User{
		{Name: "alice", Password: "a", Permissions: bar},
		{Name: "carol", Password: "c"},
		{Name: "dave", Password: "d2"},
	}}
}

// TestReloadAuthorizationAsReference reloads users and permissions on bus
// (Server.Reload) and the reference (ReloadOptions) with clients
// connected: the removed user and the one whose password changed are
// disconnected with 'Authorization Violation', the new user can log in,
// and the user who stays keeps her connection (no reconnect) with her new
// permissions: the subscription they no longer allow is removed with the
// reference's -ERR, publishing to it is refused, the new subjects work.
func TestReloadAuthorizationAsReference(t *testing.T) {
	t.Parallel()
	busOpts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), Authorization: reloadUsers(false)}
	bus := startBus(t, busOpts)
	ref := startReferenceServer(t, refOptions(reloadUsers(false)))
	for _, side := range []struct {
		name   string
		url    string
		reload func() error
	}{
		{"bus", busURL(bus), func() error {
			o := busOpts
			o.Authorization = reloadUsers(true)
			return bus.Reload(o)
		}},
		{"reference", ref.ClientURL(), func() error {
			o := refOptions(reloadUsers(true))
			o.Port = ref.Addr().(*net.TCPAddr).Port
			return ref.ReloadOptions(o)
		}},
	} {
		t.Run(side.name, func(t *testing.T) {
			type user struct {
				nc     *nats.Conn
				closed chan struct{}
				errs   chan error
			}
			login := func(name, pass string) user {
				u := user{closed: make(chan struct{}), errs: make(chan error, 8)}
				u.nc = connect(t, side.url, nats.UserInfo(name, pass), nats.NoReconnect(),
					nats.ClosedHandler(func(*nats.Conn) { close(u.closed) }),
					nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { u.errs <- err }))
				return u
			}
			alice, bob, dave := login("alice", "a"), login("bob", "b"), login("dave", "d")
			fooSub, err := alice.nc.SubscribeSync("foo.>")
			if err != nil {
				t.Fatal(err)
			}
			barSub, err := alice.nc.SubscribeSync("bar.>")
			if err != nil {
				t.Fatal(err)
			}
			if err := alice.nc.Flush(); err != nil {
				t.Fatal(err)
			}
			aliceServer := alice.nc.ConnectedServerId()

			if err := side.reload(); err != nil {
				t.Fatalf("reload: %v", err)
			}
			for name, u := range map[string]user{"bob (removed)": bob, "dave (new password)": dave} {
				select {
				case <-u.closed:
					// -ERR 'Authorization Violation' then close; whether
					// nats.go reports the error before EOF is a race.
				case <-time.After(5 * time.Second):
					t.Errorf("%s still connected after the reload", name)
				}
			}
			// alice: the same connection, foo.> gone with the reference's
			// error, bar.> still delivering.
			select {
			case err := <-alice.errs:
				if !strings.Contains(err.Error(), `Permissions Violation for Subscription to "foo.>"`) {
					t.Errorf("alice's error %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("alice was not told that foo.> is no longer allowed")
			}
			if side.name == "bus" {
				closed, err := bus.Connz(server.ConnzOptions{State: server.ConnClosed, Auth: true})
				if err != nil {
					t.Fatal(err)
				}
				reasons := map[string]string{}
				for _, ci := range closed.Conns {
					reasons[ci.AuthorizedUser] = ci.Reason
				}
				if reasons["bob"] != "Authentication Failure" || reasons["dave"] != "Authentication Failure" {
					t.Errorf("closed reasons %v, want Authentication Failure for bob and dave", reasons)
				}
			}
			carol := login("carol", "c")
			if err := carol.nc.Publish("foo.x", []byte("foo")); err != nil {
				t.Fatal(err)
			}
			if err := carol.nc.Publish("bar.x", []byte("bar")); err != nil {
				t.Fatal(err)
			}
			if err := carol.nc.Flush(); err != nil {
				t.Fatal(err)
			}
			if m, err := barSub.NextMsg(2 * time.Second); err != nil || string(m.Data) != "bar" {
				t.Errorf("alice's bar.>: %v %v", m, err)
			}
			if m, err := fooSub.NextMsg(200 * time.Millisecond); err == nil {
				t.Errorf("alice's removed foo.> still received %q", m.Data)
			}
			if err := alice.nc.Publish("foo.y", nil); err != nil {
				t.Fatal(err)
			}
			if err := alice.nc.Flush(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-alice.errs:
				if !strings.Contains(err.Error(), `Permissions Violation for Publish to "foo.y"`) {
					t.Errorf("alice's publish to foo.y: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("alice may still publish to foo.y")
			}
			if !alice.nc.IsConnected() || alice.nc.ConnectedServerId() != aliceServer || alice.nc.Stats().Reconnects != 0 {
				t.Errorf("alice's connection did not survive the reload")
			}
		})
	}
}

// TestReloadLimitsAndRefusals: new limits apply to the connections made
// after the reload (max_payload in INFO, max_connections), and a setting
// that needs a restart refuses the whole reload, naming its key in the
// error and in the log.
func TestReloadLimitsAndRefusals(t *testing.T) {
	t.Parallel()
	var logs syncLog
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), HTTPPort: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	s := startBus(t, opts)
	before := connect(t, busURL(s))
	reload := opts
	reload.MaxPayload, reload.MaxConnections = 1000, 2
	if err := s.Reload(reload); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "changed=max_payload,max_connections") {
		t.Errorf("the reload did not log what changed:\n%s", logs.String())
	}
	after := connect(t, busURL(s))
	if before.MaxPayload() != 1<<20 || after.MaxPayload() != 1000 {
		t.Errorf("max_payload: %d before the reload, %d after", before.MaxPayload(), after.MaxPayload())
	}
	if _, err := nats.Connect(busURL(s), nats.NoReconnect()); err == nil || !strings.Contains(err.Error(), "maximum connections") {
		t.Errorf("a third connection over max_connections 2: %v", err)
	}
	if v := s.Varz(); v.MaxPayload != 1000 || v.MaxConnections != 2 {
		t.Errorf("/varz after the reload: max_payload %d, max_connections %d", v.MaxPayload, v.MaxConnections)
	}
	for _, tc := range []struct {
		key    string
		change func(*server.Options)
	}{
		{"store_dir", func(o *server.Options) { o.StoreDir = t.TempDir() }},
		{"jetstream", func(o *server.Options) { o.JetStream = true }},
		{"jetstream", func(o *server.Options) { o.JetStreamEncryption = server.JetStreamEncryption{Key: "new-key"} }},
		{"port", func(o *server.Options) { o.Port = 4999 }},
		{"http_port", func(o *server.Options) { o.HTTPPort = 0 }},
		{"leafnodes", func(o *server.Options) {
			o.LeafNodes.Remotes = []server.LeafRemote{{URLs: []string{"nats://127.0.0.1:7422"}}}
		}},
	} {
		o := reload
		o.MaxPayload = 2000
		tc.change(&o)
		err := s.Reload(o)
		if !errors.Is(err, server.ErrReloadNeedsRestart) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: Reload = %v, want ErrReloadNeedsRestart naming it", tc.key, err)
		}
		if !strings.Contains(logs.String(), "key="+tc.key) {
			t.Errorf("%s: no log line names it:\n%s", tc.key, logs.String())
		}
		if s.Varz().MaxPayload != 1000 {
			t.Fatalf("%s: a refused reload applied max_payload", tc.key)
		}
	}
	if !before.IsConnected() || !after.IsConnected() {
		t.Error("a connection was dropped by the reloads")
	}
}

// TestReloadSystemAccount adds a system account user by reload: the
// new admin gets answers on $SYS.REQ.SERVER.PING.
func TestReloadSystemAccount(t *testing.T) {
	t.Parallel()
	opts := sysBusOptions()
	opts.Host, opts.StoreDir = "127.0.0.1", t.TempDir()
	s := startBus(t, opts)
	app := connect(t, busURL(s), nats.UserInfo(sysAll, sysAllPass))
	reload := opts
	reload.SystemAccount.Users = append(reload.SystemAccount.Users, server.User{Name: "ops", Password: "ops"})
	if err := s.Reload(reload); err != nil {
		t.Fatal(err)
	}
	ops := connect(t, busURL(s), nats.UserInfo("ops", "ops"))
	if _, err := sysRequest(ops, "$SYS.REQ.SERVER.PING.VARZ", nil, 2*time.Second); err != nil {
		t.Fatalf("the reloaded admin: %v", err)
	}
	if _, err := app.Request("$SYS.REQ.SERVER.PING.VARZ", nil, time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("a global user after the reload: %v", err)
	}
}

// TestReloadTurnsAuthorizationOn: connections made without credentials
// are closed once a reload requires them, as by the reference; the users
// then log in.
func TestReloadTurnsAuthorizationOn(t *testing.T) {
	t.Parallel()
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir()}
	s := startBus(t, opts)
	closed := make(chan struct{})
	anon := connect(t, busURL(s), nats.NoReconnect(), nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	reload := opts
	reload.Authorization = reloadUsers(true)
	if err := s.Reload(reload); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatalf("an anonymous connection survived authorization being turned on (%v)", anon.Status())
	}
	if _, err := nats.Connect(busURL(s), nats.NoReconnect()); err == nil {
		t.Fatal("a new connection without credentials was let in")
	}
	connect(t, busURL(s), nats.UserInfo("carol", "c"))
}

// syncLog is a log buffer safe for the server and the test at once.
type syncLog struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
