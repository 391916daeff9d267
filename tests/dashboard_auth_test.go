package tests

import (
	"net/http"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// Who may read stored messages on the dashboard, by mode (security
// issue #22): without authorization anyone (as the API itself is open);
// with authorization a logged-in user, with or without http_auth, whose
// subscribe rights apply to each message's own subject. The counters
// stay open without http_auth, as nats-server's endpoints are.

// mixedStream makes stream MIX with messages on public.1, secret.a and
// public.2, as admin.
func mixedStream(t *testing.T, s *server.Server, opts ...nats.Option) {
	t.Helper()
	nc := connect(t, busURL(s), opts...)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MIX", Subjects: []string{"public.*", "secret.*"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range [][2]string{{"public.1", "hello"}, {"secret.a", "TOPSECRET"}, {"public.2", "world"}} {
		if _, err := js.Publish(ctx, m[0], []byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
}

// With authorization, whether or not http_auth is on, the message
// endpoints answer 401 without a valid login and say how to log in;
// the counters stay open without http_auth.
func TestDashboardMessagesNeedALoginWithAuthorization(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		auth       server.Authorization
		conn       nats.Option
		user, pass string
	}{
		{"users", server.Authorization{Users: []server.User{{Name: "admin", Password: mustBcrypt(t, "s3cret")}}}, nats.UserInfo("admin", "s3cret"), "admin", "s3cret"},
		{"single user", server.Authorization{User: "admin", Password: "pw"}, nats.UserInfo("admin", "pw"), "admin", "pw"},
		{"token", server.Authorization{Token: "tok"}, nats.Token("tok"), "anyone", "tok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, d := startDashboard(t, server.Options{JetStream: true, Authorization: tc.auth})
			mixedStream(t, s, tc.conn)

			for _, path := range []string{"/dashboard/api/state", "/varz", "/jsz", "/"} {
				if code, b, _ := d.call("GET", path, "", "", ""); code != 200 {
					t.Errorf("GET %s without a login: %d %s; the counters stay open", path, code, b)
				}
			}
			var st struct {
				Auth struct {
					MessagesNeedLogin bool `json:"messages_need_login"`
				} `json:"auth"`
			}
			d.getJSON("/dashboard/api/state", &st)
			if !st.Auth.MessagesNeedLogin {
				t.Errorf("state does not say messages need a login")
			}
			for _, path := range []string{"/dashboard/api/streams/MIX/messages", "/dashboard/api/streams/MIX/messages/2"} {
				for _, who := range [][2]string{{"", ""}, {tc.user, "wrong"}, {"nobody", "wrong"}} {
					code, b, h := d.call("GET", path, "", who[0], who[1])
					if code != 401 || strings.Contains(string(b), "TOPSECRET") || strings.Contains(string(b), "hello") {
						t.Fatalf("GET %s as %q: %d %s, want 401 without payloads", path, who[0], code, b)
					}
					if why := errorText(t, b); !strings.Contains(why, "log in") || !strings.Contains(why, "http_auth") {
						t.Errorf("GET %s: the 401 does not say how to log in: %q", path, why)
					}
					if h.Get("WWW-Authenticate") != "" {
						t.Errorf("GET %s: the page's own calls get no browser prompt: %q", path, h.Get("WWW-Authenticate"))
					}
				}
				if code, b, _ := d.call("GET", path, "", tc.user, tc.pass); code != 200 || !strings.Contains(string(b), "TOPSECRET") {
					t.Errorf("GET %s logged in: %d %s", path, code, b)
				}
			}
		})
	}
}

// Logged in, a user reads only the messages whose own subjects it may
// subscribe to (the stored reads rule), in both modes that log in.
func TestDashboardMessagesApplyTheUsersSubscribeRights(t *testing.T) {
	t.Parallel()
	for _, httpAuth := range []bool{false, true} {
		name := "without http_auth"
		if httpAuth {
			name = "with http_auth"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			users := []server.User{
				{Name: "admin", Password: "a"},
				{Name: "ops", Password: "o", Permissions: &server.Permissions{
					Subscribe: &server.SubjectPermission{Deny: []string{"secret.>"}},
				}},
			}
			s, d := startDashboard(t, server.Options{JetStream: true, HTTPAuth: httpAuth, Authorization: server.Authorization{Users: users}})
			mixedStream(t, s, nats.UserInfo("admin", "a"))

			for path, want := range map[string]int{
				"/dashboard/api/streams/MIX/messages":        403, // reaches secret.a
				"/dashboard/api/streams/MIX/messages/2":      403,
				"/dashboard/api/streams/MIX/messages?from=2": 403,
				"/dashboard/api/streams/MIX/messages/1":      200,
				"/dashboard/api/streams/MIX/messages/3":      200,
				"/dashboard/api/streams/MIX/messages?from=3": 200,
			} {
				code, b, _ := d.call("GET", path, "", "ops", "o")
				if code != want || strings.Contains(string(b), "TOPSECRET") {
					t.Errorf("GET %s as ops: %d %s, want %d and never the secret payload", path, code, b, want)
					continue
				}
				if want == 403 && !strings.Contains(errorText(t, b), `may not read "secret.a"`) {
					t.Errorf("GET %s as ops: %s", path, b)
				}
			}
			if code, b, _ := d.call("GET", "/dashboard/api/streams/MIX/messages", "", "admin", "a"); code != 200 || !strings.Contains(string(b), "TOPSECRET") {
				t.Errorf("admin reads MIX: %d %s", code, b)
			}
		})
	}
}

// An action is the API request made as the logged-in user: the API's
// own checks of that user's rights apply (here the redrive's read check
// of the dead letters' subjects), not only the dashboard's check of the
// API subject.
func TestDashboardActionsCarryTheUsersRightsIntoTheAPI(t *testing.T) {
	t.Parallel()
	users := []server.User{
		{Name: "admin", Password: "a"},
		{Name: "blind", Password: "b", Permissions: &server.Permissions{
			Subscribe: &server.SubjectPermission{Deny: []string{"dlq.>"}},
		}},
	}
	s, d := startDashboard(t, server.Options{JetStream: true, Authorization: server.Authorization{Users: users}})
	nc := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	_, dlq := deadLetterJobs(t, js, nc, 1)
	code, b := d.act("streams/DLQ/redrive", `{"seq":1}`, "blind", "b")
	if code != 403 || !strings.Contains(errorText(t, b), `user "blind" may not read "dlq.jobs"`) {
		t.Fatalf("blind's redrive: %d %s, want the redrive API's read refusal", code, b)
	}
	if i, err := dlq.Info(ctxT(t)); err != nil || i.State.Msgs != 1 {
		t.Fatalf("the dead letter moved: %v %v", i, err)
	}
}

// The system account's users live in its own subject space: they cannot
// log in to read or act on the global account's streams, and where they
// are the only users, no empty user name and password passes for the
// (absent) single user.
func TestDashboardSystemAccountUsersCannotLogIn(t *testing.T) {
	t.Parallel()
	sys := server.SystemAccount{Users: []server.User{{Name: "sys", Password: "p"}}}
	t.Run("only system users", func(t *testing.T) {
		t.Parallel()
		_, d := startDashboard(t, server.Options{JetStream: true, SystemAccount: sys})
		for _, who := range [][2]string{{"", ""}, {"sys", "p"}} {
			code, b, _ := d.call("POST", "/dashboard/api/streams/ANY/purge", "", "", "",
				"X-Bus-Dashboard: 1", "Authorization: "+basicHeader(who[0], who[1]))
			if code != 401 {
				t.Errorf("purge as %q: %d %s, want 401", who[0], code, b)
			}
			if code, b, _ := d.call("GET", "/dashboard/api/streams/ANY/messages", "", "", "", "Authorization: "+basicHeader(who[0], who[1])); code != 401 {
				t.Errorf("messages as %q: %d %s, want 401", who[0], code, b)
			}
		}
	})
	t.Run("with a users list", func(t *testing.T) {
		t.Parallel()
		s, d := startDashboard(t, server.Options{JetStream: true, SystemAccount: sys,
			Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "a"}}}})
		mixedStream(t, s, nats.UserInfo("admin", "a"))
		if code, b, _ := d.call("GET", "/dashboard/api/streams/MIX/messages", "", "sys", "p"); code != 401 || strings.Contains(string(b), "TOPSECRET") {
			t.Errorf("messages as sys: %d %s, want 401", code, b)
		}
		if code, b := d.act("streams/MIX/purge", "", "sys", "p"); code != 401 {
			t.Errorf("purge as sys: %d %s, want 401", code, b)
		}
	})
}

// basicHeader is an Authorization header value, also for an empty user
// name, which dash.call does not send.
func basicHeader(user, pass string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

// A reload that changes a password changes the dashboard's login too.
func TestDashboardLoginFollowsAReload(t *testing.T) {
	t.Parallel()
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), JetStream: true, HTTPPort: -1,
		Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "old"}}}}
	s := startBus(t, opts)
	d := dash{t, "http://" + s.HTTPAddr().String()}
	mixedStream(t, s, nats.UserInfo("admin", "old"))
	path := "/dashboard/api/streams/MIX/messages"
	if code, b, _ := d.call("GET", path, "", "admin", "old"); code != 200 {
		t.Fatalf("before the reload: %d %s", code, b)
	}
	opts.Authorization.Users = []server.User{{Name: "admin", Password: mustBcrypt(t, "new")}}
	if err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	if code, b, _ := d.call("GET", path, "", "admin", "old"); code != 401 {
		t.Errorf("the old password after the reload: %d %s", code, b)
	}
	if code, b, _ := d.call("GET", path, "", "admin", "new"); code != 200 {
		t.Errorf("the new password after the reload: %d %s", code, b)
	}
}
