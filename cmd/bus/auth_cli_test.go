package main

import (
	"strings"
	"testing"
)

// A broken authorization block exits 2 before anything listens, naming
// the key inside the block, or the user whose setting cannot work.
func TestAuthorizationErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content, want string }{
		{"unknown key in block", "authorization:\n  users:\n    - {user: a, pasword: b}\n",
			`conf: unknown key "authorization.users[0].pasword"`},
		{"bad value in block", "authorization:\n  timeout: soon\n", `conf: authorization.timeout: "soon" is not a duration`},
		{"bad subject", "authorization:\n  users:\n    - user: a\n      permissions: {publish: [\"a..b\"]}\n",
			`"a..b" is not a valid subject`},
		{"no_auth_user not a user", "no_auth_user: ghost\nauthorization:\n  users: [{user: a, password: b}]\n",
			`no_auth_user "ghost" is not one of the users`},
		{"token and users", "authorization:\n  token: t\n  users: [{user: a, password: b}]\n", "can not have a token and a users array"},
		{"bad nkey", "authorization:\n  users: [{nkey: UNOPE}]\n", "not a valid public nkey"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := runBus(t, nil, "serve", "--port", "-1", "--http-port", "0", "--config", writeFile(t, "bus.yaml", tc.content))
			stderr := p.stderr.String()
			if p.code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", p.code, stderr, tc.want)
			}
		})
	}
}
