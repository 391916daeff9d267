package server

import (
	"errors"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// An unknown user costs what a wrong password does (security issue #22):
// when the configured passwords are bcrypt, a check that would run no
// bcrypt compare runs one against a pad hash of the configured cost.
// The timing itself is measured by BenchmarkAuthRefusal (tests/), never
// asserted; this test pins the decision.
func TestPasswordCheckPadsWithBcryptOfConfiguredCost(t *testing.T) {
	hash := func(cost int) string {
		h, err := bcrypt.GenerateFromPassword([]byte("right"), cost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	h4, h5, h5b := hash(4), hash(5), hash(5)
	type check struct {
		name     string
		password string // the known user's, "" for an unknown one
		known    bool
		padCost  int // 0: no pad
	}
	for _, tc := range []struct {
		name   string
		auth   Authorization
		system []User
		checks []check
	}{
		{
			name: "bcrypt users",
			auth: Authorization{Users: []User{{Name: "alice", Password: h5}, {Name: "plain", Password: "pw"}}},
			checks: []check{
				{name: "unknown user", padCost: 5},
				{name: "bcrypt user", password: h5, known: true},
				{name: "plain password beside bcrypt", password: "pw", known: true, padCost: 5},
			},
		},
		{
			name:   "most common cost when costs differ",
			auth:   Authorization{Users: []User{{Name: "a", Password: h4}, {Name: "b", Password: h5}, {Name: "c", Password: h5b}}},
			checks: []check{{name: "unknown user", padCost: 5}},
		},
		{
			name:   "plain users",
			auth:   Authorization{Users: []User{{Name: "alice", Password: "pw"}}},
			checks: []check{{name: "unknown user"}, {name: "known user", password: "pw", known: true}},
		},
		{
			name:   "bcrypt single user",
			auth:   Authorization{User: "alice", Password: h4},
			checks: []check{{name: "unknown user", padCost: 4}},
		},
		{
			name:   "bcrypt system users only",
			system: []User{{Name: "sys", Password: h5}},
			checks: []check{{name: "unknown user", padCost: 5}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAuthenticator(tc.auth, false)
			a.addAccountUsers(&account{name: DefaultSystemAccount, system: true}, tc.system, nil)
			for _, c := range tc.checks {
				pad := a.padFor(c.password, c.known)
				if c.padCost == 0 {
					if pad != "" {
						t.Errorf("%s: padded with %q, want no pad", c.name, pad)
					}
					continue
				}
				if cost, err := bcrypt.Cost([]byte(pad)); err != nil || cost != c.padCost {
					t.Errorf("%s: pad %q has cost %d (%v), want %d", c.name, pad, cost, err, c.padCost)
				}
				// Well formed: the compare runs in full and mismatches,
				// rather than failing fast on a malformed hash.
				if err := bcrypt.CompareHashAndPassword([]byte(pad), []byte("right")); !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
					t.Errorf("%s: comparing with the pad: %v, want a mismatch", c.name, err)
				}
			}
		})
	}
}

// The pad changes no outcome: the right password still lets its user
// in, and an unknown user is refused as one, whatever the password.
func TestPaddedPasswordCheckKeepsOutcomes(t *testing.T) {
	h, err := bcrypt.GenerateFromPassword([]byte("right"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range []Authorization{
		{Users: []User{{Name: "alice", Password: string(h)}, {Name: "plain", Password: "pw"}}},
		{User: "alice", Password: string(h)},
	} {
		a := newAuthenticator(auth, false)
		if _, fail := a.authenticate(credentials{User: "alice", Pass: "right"}, "", nil); fail != nil {
			t.Errorf("%+v: right password refused: %s", auth, fail.reason)
		}
		for _, pass := range []string{"right", "wrong", ""} {
			if _, fail := a.authenticate(credentials{User: "mallory", Pass: pass}, "", nil); fail == nil || fail.reason != "unknown user" {
				t.Errorf("%+v: unknown user with %q: %+v, want refused as unknown", auth, pass, fail)
			}
		}
		if _, fail := a.authenticate(credentials{User: "alice", Pass: "wrong"}, "", nil); fail == nil || fail.reason != "wrong password" {
			t.Errorf("%+v: wrong password: %+v", auth, fail)
		}
	}
	a := newAuthenticator(Authorization{Users: []User{{Name: "alice", Password: string(h)}, {Name: "plain", Password: "pw"}}}, false)
	if _, fail := a.authenticate(credentials{User: "plain", Pass: "pw"}, "", nil); fail != nil {
		t.Errorf("plain password beside bcrypt refused: %s", fail.reason)
	}
}
