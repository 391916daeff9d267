package server

import (
	"errors"
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

// recording replaces l's comparison with one that notes what each call
// compared the sent password with.
func recording(l *httpLogin) *[]string {
	var compared []string
	l.matches = func(configured, sent string) bool {
		compared = append(compared, configured)
		return passwordMatches(configured, sent)
	}
	return &compared
}

// Every refused login compares the password once, a name that cannot
// log in against a decoy of the users' highest bcrypt cost, so that an
// unknown user costs what a wrong password costs (security issue #22).
// Timing itself is measured by BenchmarkDashboardLogin, never asserted.
func TestDashboardLoginComparesAPasswordForEveryRefusal(t *testing.T) {
	t.Parallel()
	bob, carl := mustHash(t, "b", bcrypt.MinCost), mustHash(t, "c", bcrypt.MinCost+1)
	users := newAuthenticator(Authorization{Users: []User{
		{Name: "alice", Password: "pw"},
		{Name: "bob", Password: bob},
		{Name: "carl", Password: carl},
		{Nkey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"},
	}}, false)
	users.addSystemUsers(SystemAccount{Users: []User{{Name: "sys", Password: "p"}}})
	single := newAuthenticator(Authorization{User: "admin", Password: bob}, false)
	sysOnly := newAuthenticator(Authorization{}, false)
	sysOnly.addSystemUsers(SystemAccount{Users: []User{{Name: "sys", Password: carl}}})
	decoy := decoyHash(bcrypt.MinCost + 1)

	for _, tc := range []struct {
		name       string
		auth       *authenticator
		user, pass string
		compared   string // the one configured value the password was compared with
	}{
		{"wrong password", users, "bob", "x", bob},
		{"unknown user", users, "mallory", "x", decoy},
		{"nkey user", users, "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4", "", decoy},
		{"system user", users, "sys", "p", decoy},
		{"no user name", users, "", "", decoy},
		{"single user, wrong password", single, "admin", "x", bob},
		{"single user, wrong name", single, "root", "b", bob},
		{"only system users", sysOnly, "", "", decoy},
		{"only system users, by name", sysOnly, "sys", "c", decoy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newHTTPLogin(tc.auth)
			compared := recording(l)
			if id, ok := l.check(tc.user, tc.pass); ok {
				t.Fatalf("logged in as %v", id)
			}
			if len(*compared) != 1 || (*compared)[0] != tc.compared {
				t.Fatalf("compared with %q, want once with %q", *compared, tc.compared)
			}
		})
	}

	// Without bcrypt passwords the decoy is plain: every comparison is a
	// constant-time one.
	plain := newHTTPLogin(newAuthenticator(Authorization{Users: []User{{Name: "alice", Password: "pw"}}}, false))
	compared := recording(plain)
	if _, ok := plain.check("mallory", "pw"); ok || len(*compared) != 1 || IsBcrypt((*compared)[0]) {
		t.Fatalf("plain users: compared with %q", *compared)
	}
}

// The decoy is a well-formed bcrypt hash of the cost asked for, which
// bcrypt runs in full and which no password matches.
func TestDashboardLoginDecoy(t *testing.T) {
	t.Parallel()
	for _, cost := range []int{bcrypt.MinCost, bcrypt.DefaultCost, bcrypt.MaxCost} {
		if c, err := bcrypt.Cost([]byte(decoyHash(cost))); err != nil || c != cost || !IsBcrypt(decoyHash(cost)) {
			t.Errorf("decoyHash(%d): cost %d, %v", cost, c, err)
		}
	}
	for _, pass := range []string{"", "x", plainDecoy} {
		if err := bcrypt.CompareHashAndPassword([]byte(decoyHash(bcrypt.MinCost)), []byte(pass)); !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			t.Errorf("decoy against %q: %v, want a mismatch after the rounds", pass, err)
		}
	}
}

// BenchmarkDashboardLogin compares a known user's wrong password with an
// unknown user, bcrypt at its default cost: the two should cost the same.
//
//	go test -run '^$' -bench DashboardLogin -count 5 ./server
func BenchmarkDashboardLogin(b *testing.B) {
	l := newHTTPLogin(newAuthenticator(Authorization{Users: []User{
		{Name: "alice", Password: mustHash(b, "right", bcrypt.DefaultCost)},
	}}, false))
	for _, bc := range []struct{ name, user string }{
		{"known-user-wrong-password", "alice"},
		{"unknown-user", "mallory"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := l.check(bc.user, "wrong"); ok {
					b.Fatal("logged in")
				}
			}
		})
	}
}
