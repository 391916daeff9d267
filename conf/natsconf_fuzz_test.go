package conf

import (
	"os"
	"path/filepath"
	"testing"
)

// maxFuzzConf bounds the fuzzed file: the parser's work and memory grow
// with its input, and nothing interesting needs more.
const maxFuzzConf = 16 << 10

// FuzzNATSConf loads any text as a nats-server .conf file, the way bus
// serve -c does: the reference's parser, the mapping of nats-server's keys
// (natskeys.go) and every key's setter. Oracle: no panic, and a Config
// that Load returns validates. Seeds: testdata/fuzz/FuzzNATSConf (real
// configs' shapes) and the ones below.
func FuzzNATSConf(f *testing.F) {
	for _, seed := range []string{
		"port: 4222\nhttp: 8222\n",
		"listen = 127.0.0.1:4333; debug true; trace false",
		"VAR = 2MB\nmax_payload: $VAR\nmax_pending: 64MB\n",
		"authorization { users = [ {user: a, password: b, permissions: {publish: [\"x.>\"], subscribe: {deny: \"y\"}}} ] }",
		"jetstream { store_dir: /data, max_mem: 1G, max_file: 1TB, sync_interval: always, max_buffered_msgs: 1 }",
		"accounts { SYS { users = [{user: admin, password: pw}] } }\nsystem_account: SYS",
		"operator: eyJ0eXAiOiJKV1QifQ.a.b\nsystem_account: ADLK\nresolver: MEMORY\nresolver_preload { ADLK: eyJ0eXAiOiJKV1QifQ.c.d }",
		"leafnodes { remotes [ {urls: [\"nats://h:7422\"], credentials: /c.creds} ] }",
		"mappings { a.*: \"b.{{wildcard(1)}}\", c: [{destination: d, weight: 50%}] }",
		"tls { cert_file: c.pem, key_file: k.pem, verify: true, timeout: 0.5 }",
		"cluster { port: 6222 }\nlogtime: false\nmax_payload: 99EB\n",
		"a { b { c { d { e { f { g { h { } } } } } } } }",
		"ping_interval: 2020-01-01T00:00:00Z",
		"websocket { no_tls: true, headers { a: b, c: 1 }, authorization { user: u, token: t }, ping_interval: 1s, user_cookie: u }",
		"leafnodes { remotes [ {urls: [\"wss://h\", \"ws://g:80\"], ws_compression: true, ws_no_masking: yes} ] }",
		"authorization { users = [ {user: a, password: b, allowed_connection_types: [websocket, 7]} ] }",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		// Includes name files outside the test; the include guard has
		// its own test (TestLoadNATSConfIncludeCycle).
		if len(text) > maxFuzzConf || len(includes(text)) > 0 {
			return
		}
		path := filepath.Join(t.TempDir(), "nats.conf")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, nil)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Load returned a config that does not validate: %v", err)
		}
		IgnoredKeys(path)
	})
}
