package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadAuthorizationBlock(t *testing.T) {
	t.Parallel()
	want := &Authorization{
		Timeout: 1500 * time.Millisecond,
		DefaultPermissions: &Permissions{
			Publish: &SubjectPermission{Deny: []string{"$JS.API.>"}},
		},
		Users: []User{
			{Name: "admin", Password: "$2a$11$abc"},
			{Name: "worker", Password: "w", Permissions: &Permissions{
				Publish:   &SubjectPermission{Allow: []string{"jobs.done"}},
				Subscribe: &SubjectPermission{Allow: []string{"jobs.> workers"}, Deny: []string{"jobs.secret"}},
				Responses: &ResponsePermission{MaxMsgs: 3, Expires: time.Minute},
			}},
			{Nkey: "UABC", Permissions: &Permissions{Publish: &SubjectPermission{Allow: []string{}}, Responses: &ResponsePermission{}}},
		},
	}
	for _, tc := range []struct{ name, file, content string }{
		{"yaml", "bus.yaml", `
no_auth_user: worker
authorization:
  timeout: 1.5
  default_permissions:
    publish: {deny: "$JS.API.>"}
  users:
    - {user: admin, password: "$2a$11$abc"}
    - user: worker
      pass: w
      permissions:
        pub: jobs.done
        subscribe: {allow: ["jobs.> workers"], deny: [jobs.secret]}
        allow_responses: {max: 3, expires: 1m}
    - nkey: UABC
      permissions: {publish: [], allow_responses: true}
`},
		{"json", "bus.json", `{"no_auth_user": "worker", "authorization": {"timeout": "1.5s",
  "default_permissions": {"publish": {"deny": ["$JS.API.>"]}},
  "users": [{"user": "admin", "password": "$2a$11$abc"},
    {"username": "worker", "password": "w", "permissions": {"publish": ["jobs.done"],
      "subscribe": {"allow": "jobs.> workers", "deny": "jobs.secret"}, "allow_responses": {"max_msgs": 3, "ttl": "1m"}}},
    {"nkey": "UABC", "permissions": {"publish": [], "allow_responses": true}}]}}`},
		{"toml", "bus.toml", `
no_auth_user = "worker"
[authorization]
timeout = 1.5
[authorization.default_permissions.publish]
deny = ["$JS.API.>"]
[[authorization.users]]
user = "admin"
password = "$2a$11$abc"
[[authorization.users]]
user = "worker"
password = "w"
permissions = {publish = "jobs.done", subscribe = {allow = ["jobs.> workers"], deny = ["jobs.secret"]}, allow_responses = {max = 3, expires = "1m"}}
[[authorization.users]]
nkey = "UABC"
permissions = {publish = [], allow_responses = true}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Load(writeConfig(t, tc.file, tc.content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.NoAuthUser != "worker" {
				t.Errorf("no_auth_user %q", got.NoAuthUser)
			}
			if !reflect.DeepEqual(got.Authorization, want) {
				t.Errorf("authorization:\n got %#v\nwant %#v", got.Authorization, want)
				if got.Authorization != nil {
					for i := range got.Authorization.Users {
						t.Logf("user %d: %#v", i, got.Authorization.Users[i].Permissions)
					}
				}
			}
		})
	}
}

// Every problem inside the block names its full path and is reported,
// not only the first.
func TestLoadAuthorizationErrorsNameThePath(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "bus.yaml", `
authorization:
  tokn: x
  timeout: soon
  users:
    - {user: a, pasword: b}
    - {password: c}
    - user: d
      permissions:
        publish: {allow: [1], denny: x}
        allow_responses: maybe
    - notamap
`)
	_, err := Load(path, nil)
	want := []struct {
		key string
		err error
	}{
		{"authorization.tokn", ErrUnknownKey},
		{"authorization.users[0].pasword", ErrUnknownKey},
		{"authorization.users[2].permissions.publish.denny", ErrUnknownKey},
		{"authorization.timeout", ErrBadValue},
		{"authorization.users[1]", ErrBadValue},
		{"authorization.users[2].permissions.allow_responses", ErrBadValue},
		{"authorization.users[2].permissions.publish.allow[0]", ErrBadValue},
		{"authorization.users[3]", ErrBadValue},
	}
	got := map[string]error{}
	for _, ke := range keyErrors(t, err) {
		got[ke.Key] = ke.Err
		if ke.Source != "file "+path {
			t.Errorf("%s: source %q", ke.Key, ke.Source)
		}
	}
	for _, w := range want {
		if e, ok := got[w.key]; !ok || !errors.Is(e, w.err) {
			t.Errorf("key %s: got %v, want %v (all: %v)", w.key, e, w.err, err)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d errors, want %d: %v", len(got), len(want), err)
	}
}

// The block cannot come from the environment: a BUS_AUTHORIZATION is an
// unknown variable rather than silently ignored.
func TestAuthorizationIsFileOnly(t *testing.T) {
	t.Setenv("BUS_AUTHORIZATION", "token")
	_, err := Load("", nil)
	errs := keyErrors(t, err)
	if len(errs) != 1 || errs[0].Key != "BUS_AUTHORIZATION" || !errors.Is(errs[0], ErrUnknownKey) {
		t.Errorf("got %v, want an unknown BUS_AUTHORIZATION", err)
	}
}

// A user's allowed_connection_types, in nats-server's format and with its
// aliases, upper-cased; an unknown type is refused naming it.
func TestLoadAllowedConnectionTypes(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "nats.conf", `
authorization {
  users: [
    {user: web, password: p, allowed_connection_types: ["websocket", "STANDARD"]}
    {user: leaf, password: p, connection_types: LEAFNODE}
    {user: any, password: p}
  ]
}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := [][]string{}
	for _, u := range cfg.Authorization.Users {
		got = append(got, u.AllowedConnectionTypes)
	}
	want := [][]string{{"WEBSOCKET", "STANDARD"}, {"LEAFNODE"}, nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("allowed connection types: got %q, want %q", got, want)
	}
	_, err = Load(writeConfig(t, "nats.conf", `authorization { users: [{user: a, password: p, clients: [STANDARD, HTTP]}] }`), nil)
	kes := keyErrors(t, err)
	if len(kes) != 1 || kes[0].Key != "authorization.users[0].allowed_connection_types" || !strings.Contains(kes[0].Error(), `"HTTP" is not a connection type`) {
		t.Errorf("an unknown connection type: %v", err)
	}
}
