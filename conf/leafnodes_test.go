package conf

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
)

// The leafnodes block reads alike from every file format, with
// nats-server's key names (issue 15).
func TestLoadLeafNodesBlock(t *testing.T) {
	t.Parallel()
	want := &LeafNodes{
		Reconnect: 2 * time.Second,
		Remotes: []LeafRemote{
			{
				URLs: []string{"nats-leaf://user:pass@hub1:7422"}, Credentials: "/etc/bus/x.creds", Account: "$G",
				DenyImports: []string{"a.>"}, DenyExports: []string{"b.>", "c.*"}, NoRandomize: true,
				TLS:         &LeafTLS{CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "k.pem", Insecure: true, Timeout: 1500 * time.Millisecond},
				DialTimeout: time.Second, FirstInfoTimeout: 3 * time.Second,
			},
			{URLs: []string{"nats://hub2:7422", "tls://hub3"}, DialTimeout: 5 * time.Second, Disabled: true},
		},
	}
	for name, content := range map[string]string{
		"bus.yaml": `
leafnodes:
  reconnect: "2s"
  dial_timeout: 5s
  remotes:
    - url: "nats-leaf://user:pass@hub1:7422"
      credentials: "/etc/bus/x.creds"
      account: "$G"
      deny_imports: ["a.>"]
      deny_exports: ["b.>", "c.*"]
      no_randomize: true
      tls: {ca_file: ca.pem, cert_file: c.pem, key_file: k.pem, insecure: true, timeout: 1.5}
      dial_timeout: "1s"
      first_info_timeout: 3
    - urls: ["nats://hub2:7422", "tls://hub3", "nats://hub2:7422"]
      disabled: true
`,
		"bus.toml": `
[leafnodes]
reconnect = "2s"
dial_timeout = "5s"

[[leafnodes.remotes]]
url = "nats-leaf://user:pass@hub1:7422"
credentials = "/etc/bus/x.creds"
account = "$G"
deny_imports = ["a.>"]
deny_exports = ["b.>", "c.*"]
no_randomize = true
dial_timeout = "1s"
first_info_timeout = 3
tls = {ca_file = "ca.pem", cert_file = "c.pem", key_file = "k.pem", insecure = true, timeout = 1.5}

[[leafnodes.remotes]]
urls = ["nats://hub2:7422", "tls://hub3"]
disabled = true
`,
		"bus.json": `{"leafnodes": {"reconnect": "2s", "dial_timeout": "5s", "remotes": [
  {"url": "nats-leaf://user:pass@hub1:7422", "credentials": "/etc/bus/x.creds", "account": "$G",
   "deny_imports": ["a.>"], "deny_exports": ["b.>", "c.*"], "no_randomize": true,
   "tls": {"ca_file": "ca.pem", "cert_file": "c.pem", "key_file": "k.pem", "insecure": true, "timeout": "1500ms"},
   "dial_timeout": "1s", "first_info_timeout": 3},
  {"urls": ["nats://hub2:7422", "tls://hub3"], "disabled": true}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Load(writeConfig(t, name, content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.LeafNodes, want) {
				t.Errorf("leafnodes:\n got %+v\nwant %+v", got.LeafNodes, want)
			}
		})
	}
}

// A remote reaching its hub's websocket listener, in nats-server's
// format with its aliases for the websocket keys.
func TestLeafNodesWebSocketRemote(t *testing.T) {
	t.Parallel()
	got, err := Load(writeConfig(t, "nats.conf", `
leafnodes {
  remotes [
    { urls: ["wss://hub1:443", "wss://hub2"], ws_compression: true, ws_no_masking: true }
    { url: "ws://hub3:8080", websocket_compress: true, websocket_no_masking: false }
  ]
}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []LeafRemote{
		{URLs: []string{"wss://hub1:443", "wss://hub2"}, WSCompression: true, WSNoMasking: true},
		{URLs: []string{"ws://hub3:8080"}, WSCompression: true},
	}
	if !reflect.DeepEqual(got.LeafNodes.Remotes, want) {
		t.Errorf("remotes:\n got %+v\nwant %+v", got.LeafNodes.Remotes, want)
	}
}

// nats-server's aliases name the same settings.
func TestLeafNodesAliases(t *testing.T) {
	t.Parallel()
	seed := userSeed(t)
	got, err := Load(writeConfig(t, "bus.yaml", `
leafnodes:
  reconnect_interval: 3
  remotes:
    - urls: "nats://hub:7422"
      seed: "`+seed+`"
      local: "$G"
      deny_import: "a.b"
      deny_export: ["c"]
      dont_randomize: true
      tls: {first: false}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &LeafNodes{Reconnect: 3 * time.Second, Remotes: []LeafRemote{{
		URLs: []string{"nats://hub:7422"}, Nkey: seed, Account: "$G", NoRandomize: true,
		DenyImports: []string{"a.b"}, DenyExports: []string{"c"}, TLS: &LeafTLS{},
	}}}
	if !reflect.DeepEqual(got.LeafNodes, want) {
		t.Errorf("leafnodes:\n got %+v\nwant %+v", got.LeafNodes, want)
	}
	if _, err := Load(writeConfig(t, "bus.yaml", "leafnodes:\n  reconnect: 1s\n  reconnect_delay: 2s\n"), nil); !errors.Is(err, ErrBadValue) {
		t.Errorf("reconnect and reconnect_delay both set: %v", err)
	}
}

// Keys of nats-server that ask for nothing bus would not do anyway, by
// their off value, load; the same keys on refuse to.
func TestLeafNodesOffValuesOfUnsupportedKeys(t *testing.T) {
	t.Parallel()
	_, err := Load(writeConfig(t, "bus.yaml", `
leafnodes:
  compression: off
  isolate: false
  remotes:
    - url: nats://hub
      hub: false
      compression: disabled
      ignore_discovered_servers: false
      tls: {handshake_first: false}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(writeConfig(t, "bus.yaml", "leafnodes:\n  compression: s2_auto\n  remotes: [{url: nats://hub, hub: true}]\n"), nil)
	got := map[string]bool{}
	for _, ke := range keyErrors(t, err) {
		got[ke.Key] = errors.Is(ke, ErrOutOfRange)
	}
	if !got["leafnodes.compression"] || !got["leafnodes.remotes[0].hub"] || len(got) != 2 {
		t.Errorf("errors %v, want leafnodes.compression and leafnodes.remotes[0].hub", err)
	}
}

func TestLeafNodesBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string // the leafnodes block, indented by two
		wantKey string
		wantErr error
		wantMsg string // in the message
	}{
		{"not_a_block", "leafnodes: true", "leafnodes", ErrBadValue, "true is not a map"},
		{"remotes_not_a_list", "  remotes: nats://hub", "leafnodes.remotes", ErrBadValue, `"nats://hub" is not a list of remotes`},
		{"remote_not_a_map", "  remotes: [nats://hub]", "leafnodes.remotes[0]", ErrBadValue, "is not a map"},
		{"no_url", "  remotes: [{account: $G}]", "leafnodes.remotes[0]", ErrBadValue, "needs a url"},
		{"url_scheme", "  remotes: [{url: http://hub:7422}]", "leafnodes.remotes[0].url", ErrBadValue, `"http://hub:7422" needs the scheme nats://`},
		{"url_no_scheme", "  remotes: [{url: hub:7422}]", "leafnodes.remotes[0].url", ErrBadValue, "needs the scheme"},
		{"url_websocket_mixed", "  remotes: [{urls: [ws://hub:443, nats://hub]}]", "leafnodes.remotes[0].url", ErrBadValue, "cannot mix websocket"},
		{"ws_compression_not_bool", "  remotes: [{url: wss://hub, ws_compression: maybe}]", "leafnodes.remotes[0].ws_compression", ErrBadValue, `"maybe" is not a boolean`},
		{"url_no_host", "  remotes: [{url: \"nats://:7422\"}]", "leafnodes.remotes[0].url", ErrBadValue, "has no host"},
		{"url_port", "  remotes: [{url: \"nats://hub:70000\"}]", "leafnodes.remotes[0].url", ErrBadValue, "port out of range"},
		{"url_password_hidden", "  remotes: [{url: \"http://u:secret@hub\"}]", "leafnodes.remotes[0].url", ErrBadValue, `"http://u:xxxxx@hub"`},
		{"urls_entry", "  remotes: [{urls: [nats://a, 7]}]", "leafnodes.remotes[0].url[1]", ErrBadValue, "7 is not a URL"},
		{"urls_empty", "  remotes: [{urls: []}]", "leafnodes.remotes[0].url", ErrBadValue, "is not a URL or a list"},
		{"creds_and_nkey", "  remotes: [{url: nats://hub, credentials: x.creds, nkey: " + userSeed(t) + "}]", "leafnodes.remotes[0]", ErrBadValue, "credentials and nkey are exclusive"},
		{"nkey_not_a_seed", "  remotes: [{url: nats://hub, nkey: UABC}]", "leafnodes.remotes[0].nkey", ErrBadValue, "is not a user nkey seed"},
		{"account_other", "  remotes: [{url: nats://hub, account: ORDERS}]", "leafnodes.remotes[0].account", ErrBadValue, `"ORDERS" is not the global account "$G"`},
		{"deny_bad_subject", "  remotes: [{url: nats://hub, deny_imports: [\"a..b\"]}]", "leafnodes.remotes[0].deny_imports[0]", ErrBadValue, `"a..b" is not a valid subject`},
		{"deny_gt_not_last", "  remotes: [{url: nats://hub, deny_exports: \">.a\"}]", "leafnodes.remotes[0].deny_exports", ErrBadValue, `">.a" is not a valid subject`},
		{"deny_not_subjects", "  remotes: [{url: nats://hub, deny_exports: {a: b}}]", "leafnodes.remotes[0].deny_exports", ErrBadValue, "is not a subject or a list"},
		{"no_randomize_not_bool", "  remotes: [{url: nats://hub, no_randomize: maybe}]", "leafnodes.remotes[0].no_randomize", ErrBadValue, `"maybe" is not a boolean`},
		{"dial_timeout_words", "  remotes: [{url: nats://hub, dial_timeout: soon}]", "leafnodes.remotes[0].dial_timeout", ErrBadValue, `"soon" is not a duration`},
		{"first_info_negative", "  remotes: [{url: nats://hub, first_info_timeout: -1s}]", "leafnodes.remotes[0].first_info_timeout", ErrBadValue, "-1s is negative"},
		{"reconnect_negative", "  reconnect: -2", "leafnodes.reconnect", ErrBadValue, "-2s is negative"},
		{"reconnect_fraction", "  reconnect: 1.5", "leafnodes.reconnect", ErrBadValue, "1.5 is not a duration"},
		{"tls_cert_without_key", "  remotes: [{url: tls://hub, tls: {cert_file: c.pem}}]", "leafnodes.remotes[0].tls", ErrBadValue, "both cert_file and key_file"},
		{"tls_timeout", "  remotes: [{url: tls://hub, tls: {timeout: later}}]", "leafnodes.remotes[0].tls.timeout", ErrBadValue, `"later" is not a duration`},
		{"tls_verify", "  remotes: [{url: tls://hub, tls: {verify: true}}]", "leafnodes.remotes[0].tls.verify", ErrOutOfRange, "takes only ca_file"},
		{"tls_unknown", "  remotes: [{url: tls://hub, tls: {ca_fil: x}}]", "leafnodes.remotes[0].tls.ca_fil", ErrUnknownKey, `did you mean "ca_file"?`},
		{"duplicate_remote", "  remotes: [{url: nats://hub}, {urls: [nats://hub], account: $G}]", "leafnodes.remotes[1]", ErrBadValue, "same remote as remotes[0]"},
		{"remote_unknown", "  remotes: [{url: nats://hub, acount: $G}]", "leafnodes.remotes[0].acount", ErrUnknownKey, `did you mean "account"?`},
		{"block_unknown", "  remote: []", "leafnodes.remote", ErrUnknownKey, `did you mean "remotes"?`},

		// Listening for leaf nodes is the hub's side.
		{"port", "  port: 7422", "leafnodes.port", ErrOutOfRange, "bus is a leaf, not a hub"},
		{"listen", "  listen: 0.0.0.0:7422", "leafnodes.listen", ErrOutOfRange, "does not accept leaf connections"},
		{"host_alias", "  net: 0.0.0.0", "leafnodes.host", ErrOutOfRange, "bus is a leaf, not a hub"},
		{"authorization", "  authorization: {user: a, password: b}", "leafnodes.authorization", ErrOutOfRange, "bus is a leaf, not a hub"},
		{"block_tls", "  tls: {cert_file: c, key_file: k}", "leafnodes.tls", ErrOutOfRange, "a remote's TLS goes in its own tls block"},
		{"advertise_alias", "  leafnode_advertise: x:1", "leafnodes.advertise", ErrOutOfRange, "bus is a leaf"},
		{"write_deadline", "  write_deadline: 1s", "leafnodes.write_deadline", ErrOutOfRange, "no write deadline"},

		// Remote features bus's link lacks.
		{"hub", "  remotes: [{url: nats://hub, hub: true}]", "leafnodes.remotes[0].hub", ErrOutOfRange, "hub side"},
		{"proxy", "  remotes: [{url: nats://hub, proxy: {url: \"http://p:3128\"}}]", "leafnodes.remotes[0].proxy", ErrOutOfRange, "proxy"},
		{"compression", "  remotes: [{url: nats://hub, compression: s2_fast}]", "leafnodes.remotes[0].compression", ErrOutOfRange, "not compressed"},
		{"js_migrate", "  remotes: [{url: nats://hub, js_cluster_migrate: true}]", "leafnodes.remotes[0].jetstream_cluster_migrate", ErrOutOfRange, "no JetStream cluster"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			content := tc.yaml
			if strings.HasPrefix(content, "  ") {
				content = "leafnodes:\n" + content
			}
			path := writeConfig(t, "bus.yaml", content+"\n")
			cfg, err := Load(path, nil)
			if err == nil {
				t.Fatalf("loaded %+v", cfg.LeafNodes)
			}
			errs := keyErrors(t, err)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %v", len(errs), err)
			}
			ke := errs[0]
			if ke.Key != tc.wantKey || !errors.Is(ke, tc.wantErr) || !strings.Contains(ke.Error(), tc.wantMsg) {
				t.Errorf("got %q (key %q), want key %q, %v, containing %q", ke.Error(), ke.Key, tc.wantKey, tc.wantErr, tc.wantMsg)
			}
			if ke.Source != "file "+path {
				t.Errorf("source %q", ke.Source)
			}
		})
	}
}

// A bad nkey is a secret: the error names the key, not the value.
func TestLeafNodesNkeyErrorHidesTheSeed(t *testing.T) {
	t.Parallel()
	const notQuite = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRB"
	_, err := Load(writeConfig(t, "bus.yaml", "leafnodes:\n  remotes: [{url: nats://hub, nkey: "+notQuite+"}]\n"), nil)
	if err == nil || strings.Contains(err.Error(), notQuite) {
		t.Errorf("error %v", err)
	}
}

// bus.example.yaml's commented example loads.
func TestExampleLeafNodesLoads(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n# leafnodes:\n")
	if !ok {
		t.Fatal("no leafnodes example")
	}
	block := "leafnodes:\n"
	for line := range strings.Lines(rest) {
		if !strings.HasPrefix(line, "#   ") {
			break
		}
		block += strings.TrimPrefix(line, "# ")
	}
	got, err := Load(writeConfig(t, "bus.yaml", block), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, block)
	}
	if got.LeafNodes == nil || len(got.LeafNodes.Remotes) != 2 || got.LeafNodes.Remotes[1].Credentials == "" {
		t.Errorf("example gave %+v", got.LeafNodes)
	}
}

func userSeed(t *testing.T) string {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	return string(seed)
}
