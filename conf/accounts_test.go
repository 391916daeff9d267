package conf

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
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

// A bad accounts block names the key: a reserved name, a limit out of
// range, a key bus does not implement, a system_account naming no
// account, an unknown key in an account or a user.
func TestAccountsBlockErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content, key, reason string }{
		{"global account", "accounts:\n  $G: {users: [{user: a, password: b}]}\n", `accounts."$G"`, "Reserved Account"},
		{"zero limit", "accounts:\n  APP: {limits: {max_connections: 0}}\n", `accounts."APP".limits.max_connections`, "-1 for no limit"},
		{"limit out of range", "accounts:\n  APP: {limits: {max_subs: 3000000000}}\n", `accounts."APP".limits.max_subscriptions`, "out of range"},
		{"limit not a number", "accounts:\n  APP: {limits: {max_payload: lots}}\n", `accounts."APP".limits.max_payload`, "whole number"},
		{"unknown limit", "accounts:\n  APP: {limits: {max_jets: 1}}\n", `accounts."APP".limits.max_jets`, ""},
		{"leaf limit", "accounts:\n  APP: {limits: {max_leafnodes: 1}}\n", `accounts."APP".limits.max_leafnodes`, "leaf node"},
		{"jetstream without the server's", "jetstream: false\naccounts:\n  APP: {jetstream: enabled}\n", `accounts."APP".jetstream`, "needs JetStream on the server"},
		{"jetstream zero memory", "jetstream: true\naccounts:\n  APP: {jetstream: {max_mem: 0}}\n", `accounts."APP".jetstream.max_memory`, "not in bus yet"},
		{"stream bytes required not a bool", "jetstream: true\naccounts:\n  APP: {jetstream: {max_stream_bytes: yes please}}\n", `accounts."APP".jetstream.max_bytes_required`, "not true or false"},
		{"stream bytes bound negative", "jetstream: true\naccounts:\n  APP: {jetstream: {disk_max_stream_bytes: -5}}\n", `accounts."APP".jetstream.store_max_stream_bytes`, "out of range"},
		{"stream bytes bound not a size", "jetstream: true\naccounts:\n  APP: {jetstream: {mem_max_stream_bytes: big}}\n", `accounts."APP".jetstream.memory_max_stream_bytes`, "whole number"},
		{"jetstream bad word", "jetstream: true\naccounts:\n  APP: {jetstream: sometimes}\n", `accounts."APP".jetstream`, "'enabled' or 'disabled'"},
		{"jetstream cluster traffic", "jetstream: true\naccounts:\n  APP: {jetstream: {cluster_traffic: owner}}\n", `accounts."APP".jetstream.cluster_traffic`, "single server"},
		{"jetstream unsafe name", "jetstream: true\naccounts:\n  team.a: {jetstream: enabled}\n", `accounts."team.a"`, "fit for a directory"},
		{"latency sampling", "accounts:\n  APP: {exports: [{service: a, latency: {sampling: 120, subject: lat}}]}\n", `accounts."APP".exports[0].latency.sampling`, "should be 1-100"},
		{"latency sampling word", "accounts:\n  APP: {exports: [{service: a, latency: {sampling: often, subject: lat}}]}\n", `accounts."APP".exports[0].latency.sampling`, "Failed to parse latency sample"},
		{"latency subject", "accounts:\n  APP: {exports: [{service: a, latency: {sampling: 50}}]}\n", `accounts."APP".exports[0].latency`, "Latency subject required"},
		{"latency on a stream", "accounts:\n  APP: {exports: [{stream: a, latency: lat}]}\n", `accounts."APP".exports[0].latency`, "non-service"},
		{"export kind", "accounts:\n  APP: {exports: [{accounts: [B]}]}\n", `accounts."APP".exports[0]`, "a stream or a service"},
		{"response type", "accounts:\n  APP: {exports: [{service: a, response_type: many}]}\n", `accounts."APP".exports[0].response_type`, "Unknown response type"},
		{"import share", "accounts:\n  APP: {imports: [{service: {account: B, subject: a}, share: true}]}\n", `accounts."APP".imports[0].share`, "not in bus yet"},
		{"import prefix and to", "accounts:\n  APP: {imports: [{stream: {account: B, subject: a}, prefix: p, to: t}]}\n", `accounts."APP".imports[0]`, "can not have a 'prefix' and a 'to'"},
		{"import source", "accounts:\n  APP: {imports: [{stream: {subject: a}}]}\n", `accounts."APP".imports[0].stream`, "Expect an account name and a subject"},
		{"system account limits", "accounts:\n  SYS: {users: [{user: a, password: b}], limits: {max_conn: 2}}\nsystem_account: SYS\n", `accounts."SYS"`, "users only"},
		{"bad mapping", "accounts:\n  APP: {mappings: {\"\": b}}\n", `accounts."APP".mappings.""`, "must not be empty"},
		{"system account missing", "system_account: SYS\n", "system_account", "names no account"},
		{"unknown account key", "accounts:\n  SYS: {users: [], bogus: 1}\nsystem_account: SYS\n", `accounts."SYS".bogus`, ""},
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

// An application account takes users, default_permissions, mappings
// (maps), limits and jetstream, in every file format bus reads; -1 is
// no limit.
func TestAccountsBlockApplicationAccount(t *testing.T) {
	t.Parallel()
	want := Account{
		Name:               "TEAM_A",
		Users:              []User{{Name: "alice", Password: "pa"}},
		DefaultPermissions: &Permissions{Publish: &SubjectPermission{Allow: []string{"a.>"}}},
		Mappings:           &Mappings{Entries: []Mapping{{Source: "in", Destinations: []MapDestination{{Subject: "out", Weight: 100}}}}},
		Limits:             AccountLimits{MaxConnections: 5, MaxPayload: 1024},
		JetStream:          &AccountJetStream{MaxMemory: 1 << 20, MaxStreams: 2, MaxAckPending: 10},
	}
	for _, tc := range []struct{ name, content string }{
		{"bus.yaml", `
jetstream: true
accounts:
  TEAM_A:
    users: [{user: alice, password: pa}]
    default_permissions: {publish: ["a.>"]}
    mappings: {in: out}
    limits: {max_connections: 5, max_subscriptions: -1, max_payload: 1KB}
    jetstream: {max_mem: 1MB, max_file: -1, max_streams: 2, max_ack_pending: 10}
`},
		{"bus.json", `{"jetstream": true, "accounts": {"TEAM_A": {"users": [{"user": "alice", "password": "pa"}],
 "default_permissions": {"publish": ["a.>"]}, "maps": {"in": "out"},
 "limits": {"max_conn": 5, "max_subs": -1, "max_pay": 1024},
 "jetstream": {"memory": 1048576, "streams": 2, "max_ack_pending": 10}}}}`},
		{"bus.toml", `
jetstream = true
[accounts.TEAM_A]
users = [{user = "alice", password = "pa"}]
default_permissions = {publish = ["a.>"]}
mappings = {in = "out"}
limits = {max_connections = 5, max_subscriptions = -1, max_payload = 1024}
jetstream = {max_memory = "1MB", max_store = -1, max_streams = 2, max_ack_pending = 10}
`},
		{"bus.conf", `
jetstream: enabled
accounts {
  TEAM_A {
    users = [{user: alice, password: pa}]
    default_permissions { publish: ["a.>"] }
    mappings { in: out }
    limits { max_connections: 5, max_subscriptions: -1, max_payload: 1KB }
    jetstream { max_mem: 1MB, max_file: -1, max_streams: 2, max_ack_pending: 10 }
  }
}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeConfig(t, tc.name, tc.content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Account("TEAM_A"); got == nil || !reflect.DeepEqual(*got, want) {
				t.Fatalf("account = %+v, want %+v", got, want)
			}
			if got := cfg.SystemAccountName(); got != "" {
				t.Fatalf("system account %q, want none", got)
			}
		})
	}
}

// The README's "Several teams on one bus" config loads, with its two
// accounts.
func TestAccountsReadmeConfig(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n## Several teams on one bus\n")
	if i < 0 {
		t.Fatal("README has no \"Several teams on one bus\"")
	}
	text = text[i+1:]
	text = text[:strings.Index(text, "\n## ")]
	var cfgs []Config
	for {
		start := strings.Index(text, "```yaml\n")
		if start < 0 {
			break
		}
		text = text[start+8:]
		end := strings.Index(text, "```")
		cfg, err := Load(writeConfig(t, "bus.yaml", text[:end]), nil)
		if err != nil {
			t.Fatalf("README block %d: %v", len(cfgs), err)
		}
		cfgs, text = append(cfgs, cfg), text[end:]
	}
	if len(cfgs) != 2 {
		t.Fatalf("%d yaml blocks, want the accounts and the exports and imports", len(cfgs))
	}
	a, b2 := cfgs[0].Account("TEAM_A"), cfgs[0].Account("TEAM_B")
	if a == nil || b2 == nil || a.JetStream == nil || a.JetStream.MaxStreams != 20 || a.Limits.MaxConnections != 50 {
		t.Fatalf("accounts %+v %+v", a, b2)
	}
	if a := cfgs[1].Account("TEAM_A"); a == nil || len(a.Exports.Streams) != 1 || len(a.Exports.Services) != 1 {
		t.Fatalf("exports %+v", a)
	}
	if b := cfgs[1].Account("TEAM_B"); b == nil || len(b.Imports.Streams) != 1 || len(b.Imports.Services) != 1 {
		t.Fatalf("imports %+v", b)
	}
}

// Exports and imports parse with nats-server's keys, in its own format.
func TestAccountsBlockExportsImports(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "bus.conf", `
accounts {
  A {
    exports [
      { stream: "events.>" }
      { service: "help.*", accounts: [B], response_type: stream, response_threshold: "5s" }
      { service: "ask.a", latency: "lat.a" }
      { service: "ask.b", latency: { sampling: "25%", subject: "lat.b" } }
      { service: "ask.c", latency: { sampling: headers, subject: "lat.c" } }
      { service: "ask.d", latency: { sampling: 40, subject: "lat.d" } }
    ]
  }
  B {
    imports [
      { stream: { account: A, subject: "events.>" }, prefix: from_a }
      { service: { account: A, subject: "help.*" }, to: "ahelp.*" }
    ]
  }
}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantExports := Exports{
		Streams: []StreamExport{{Subject: "events.>"}},
		Services: []ServiceExport{{Subject: "help.*", Accounts: []string{"B"}, ResponseType: "stream", ResponseThreshold: 5 * time.Second},
			{Subject: "ask.a", Latency: &Latency{Sampling: 100, Subject: "lat.a"}},
			{Subject: "ask.b", Latency: &Latency{Sampling: 25, Subject: "lat.b"}},
			{Subject: "ask.c", Latency: &Latency{Sampling: 0, Subject: "lat.c"}},
			{Subject: "ask.d", Latency: &Latency{Sampling: 40, Subject: "lat.d"}}},
	}
	wantImports := Imports{
		Streams:  []StreamImport{{Account: "A", Subject: "events.>", Prefix: "from_a"}},
		Services: []ServiceImport{{Account: "A", Subject: "help.*", To: "ahelp.*"}},
	}
	if a := cfg.Account("A"); a == nil || !reflect.DeepEqual(a.Exports, wantExports) {
		t.Errorf("A's exports %+v", a)
	}
	if b := cfg.Account("B"); b == nil || !reflect.DeepEqual(b.Imports, wantImports) {
		t.Errorf("B's imports %+v", b)
	}
}
