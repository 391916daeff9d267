package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The accounts block keeps account names as written (case and $), in
// every file format; system_account names the system account, which is
// $SYS when that account exists and system_account is left out.
func TestAccountsBlock(t *testing.T) {
	t.Parallel()
	admin := []User{{Name: "admin", Password: "s3cret", Permissions: &Permissions{Subscribe: &SubjectPermission{Allow: []string{"$SYS.>", "_INBOX.>"}}}}}
	for _, tc := range []struct{ name, content, system string }{
		{"bus.yaml", `
accounts:
  SYS:
    users:
      - {user: admin, password: s3cret, permissions: {subscribe: ["$SYS.>", "_INBOX.>"]}}
system_account: SYS
`, "SYS"},
		{"bus.json", `{"accounts": {"SYS": {"users": [{"user": "admin", "pass": "s3cret", "permissions": {"sub": ["$SYS.>", "_INBOX.>"]}}]}}, "system": "SYS"}`, "SYS"},
		{"bus.toml", `
system_account = "SYS"
[accounts.SYS]
users = [{user = "admin", password = "s3cret", permissions = {subscribe = ["$SYS.>", "_INBOX.>"]}}]
`, "SYS"},
		{"default.yaml", `
accounts:
  $SYS:
    users: [{user: admin, password: s3cret, permissions: {subscribe: ["$SYS.>", "_INBOX.>"]}}]
`, "$SYS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeConfig(t, tc.name, tc.content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.SystemAccountName(); got != tc.system {
				t.Fatalf("system account %q, want %q", got, tc.system)
			}
			a := cfg.Account(tc.system)
			if a == nil || !reflect.DeepEqual(a.Users, admin) {
				t.Fatalf("account %q = %+v, want users %+v", tc.system, a, admin)
			}
		})
	}
}

// A bad accounts block names the key: an account other than the system
// account (bus has one subject space), a system_account naming no
// account, an unknown key in an account or a user.
func TestAccountsBlockErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content, key, reason string }{
		{"other account", "accounts:\n  APP: {users: [{user: a, password: b}]}\n  SYS: {users: [{user: admin, password: s}]}\nsystem_account: SYS\n",
			`accounts."APP"`, "only account"},
		{"no system account", "accounts:\n  APP: {users: [{user: a, password: b}]}\n", `accounts."APP"`, "only account"},
		{"system account missing", "system_account: SYS\n", "system_account", "names no account"},
		{"unknown account key", "accounts:\n  SYS: {users: [], jetstream: enabled}\nsystem_account: SYS\n", `accounts."SYS".jetstream`, ""},
		{"unknown user key", "accounts:\n  SYS: {users: [{user: a, pasword: b}]}\nsystem_account: SYS\n", `accounts."SYS".users[0].pasword`, "password"},
		{"not a map", "accounts: [SYS]\n", "accounts", "not a map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, "bus.yaml", tc.content), nil)
			if err == nil {
				t.Fatal("loaded")
			}
			var found bool
			for _, ke := range keyErrors(t, err) {
				if ke.Key == tc.key && strings.Contains(ke.Reason, tc.reason) {
					found = true
				}
			}
			if !found {
				t.Fatalf("error %v does not name %s (%q)", err, tc.key, tc.reason)
			}
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("%v is not a *KeyError", err)
			}
		})
	}
}
