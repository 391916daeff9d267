package server

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func mustHash(t testing.TB, pass string, cost int) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pass), cost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// Every refused login checks a password once through checkPassword, a
// name that cannot log in as an unknown one (so it is padded with a
// bcrypt compare of the configured cost, TestPasswordCheckPadsWithBcryptOfConfiguredCost),
// so that an unknown user costs what a wrong password costs (security
// issue #22). Timing itself is measured by BenchmarkDashboardLogin, never
// asserted.
func TestDashboardLoginChecksAPasswordForEveryRefusal(t *testing.T) {
	t.Parallel()
	bob := mustHash(t, "b", bcrypt.MinCost)
	users := func() *authenticator {
		a := newAuthenticator(Authorization{Users: []User{
			{Name: "alice", Password: "pw"},
			{Name: "bob", Password: bob},
			{Nkey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"},
		}}, false)
		a.addAccountUsers(&account{name: DefaultSystemAccount, system: true}, []User{{Name: "sys", Password: "p"}}, nil)
		return a
	}
	single := func() *authenticator { return newAuthenticator(Authorization{User: "admin", Password: bob}, false) }
	sysOnly := func() *authenticator {
		a := newAuthenticator(Authorization{}, false)
		a.addAccountUsers(&account{name: DefaultSystemAccount, system: true}, []User{{Name: "sys", Password: bob}}, nil)
		return a
	}
	type check struct {
		password string
		known    bool
	}
	for _, tc := range []struct {
		name       string
		auth       func() *authenticator
		user, pass string
		want       check
	}{
		{"wrong password", users, "bob", "x", check{bob, true}},
		{"unknown user", users, "mallory", "x", check{}},
		{"nkey user", users, "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", "", check{}},
		{"system user", users, "sys", "p", check{}},
		{"no user name", users, "", "", check{}},
		{"single user, wrong password", single, "admin", "x", check{bob, true}},
		{"single user, wrong name", single, "root", "b", check{bob, true}},
		{"only system users", sysOnly, "sys", "b", check{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.auth()
			var checks []check
			a.checked = func(password string, known bool) { checks = append(checks, check{password, known}) }
			if id, ok := a.httpLogin(tc.user, tc.pass); ok {
				t.Fatalf("logged in as %v", id)
			}
			if len(checks) != 1 || checks[0] != tc.want {
				t.Fatalf("checked %+v, want once %+v", checks, tc.want)
			}
		})
	}
}

// BenchmarkDashboardLogin compares a known user's wrong password with an
// unknown user, bcrypt at its default cost: the two should cost the same.
//
//	go test -run '^$' -bench DashboardLogin -count 5 ./server
func BenchmarkDashboardLogin(b *testing.B) {
	a := newAuthenticator(Authorization{Users: []User{
		{Name: "alice", Password: mustHash(b, "right", bcrypt.DefaultCost)},
	}}, false)
	for _, bc := range []struct{ name, user string }{
		{"known-user-wrong-password", "alice"},
		{"unknown-user", "mallory"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := a.httpLogin(bc.user, "wrong"); ok {
					b.Fatal("logged in")
				}
			}
		})
	}
}

func TestDashboardBasicAuth(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := newAuthenticator(Authorization{Users: []User{
		{Name: "alice", Password: "pw"},
		{Name: "bob", Password: string(hash)},
		{Nkey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"},
	}}, false)
	for _, tc := range []struct {
		user, pass string
		ok         bool
	}{
		{"alice", "pw", true},
		{"alice", "PW", false},
		{"bob", "s3cret", true},
		{"bob", string(hash), false},
		{"carol", "pw", false},
		{"UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", "", false},
		{"", "", false},
	} {
		if id, ok := users.httpLogin(tc.user, tc.pass); ok != tc.ok || ok && id.name != tc.user {
			t.Errorf("check(%q, %q) = %v, %v", tc.user, tc.pass, id, ok)
		}
	}
	single := newAuthenticator(Authorization{User: "admin", Password: "x"}, false)
	if _, ok := single.httpLogin("admin", "x"); !ok {
		t.Error("single user refused")
	}
	if _, ok := single.httpLogin("root", "x"); ok {
		t.Error("another user name accepted")
	}
	token := newAuthenticator(Authorization{Token: "t0k"}, false)
	if _, ok := token.httpLogin("whoever", "t0k"); !ok {
		t.Error("token refused")
	}
	if _, ok := token.httpLogin("t0k", ""); ok {
		t.Error("token as the user name accepted")
	}
	if id, ok := newAuthenticator(Authorization{}, false).httpLogin("", ""); !ok || id.perms != nil {
		t.Error("without authorization everyone has every right")
	}
}
