package conf

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// A nats-server .conf file loads into the same Config as the YAML that
// says the same: its three separators, blocks, lists, include, a
// $VARIABLE from the file and one from the environment, sizes and
// durations (issue 23). Not parallel: it sets the environment.
func TestLoadNATSConf(t *testing.T) {
	t.Setenv("NATS_TEST_SECRET", "s3cr3t-from-env")
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("auth.conf", `
authorization {
  users = [
    {user: alice, password: $NATS_TEST_SECRET, permissions: {publish: "orders.>", subscribe: ["_INBOX.>", "orders.*"]}}
    {user: bob, password: "$2a$11$PWIFAL8RsWyGI3jVZtO9Nu8.6jOxzxfZo7c/W0eLk017hjgUKWrhy"}
  ]
}
`)
	path := write("nats.conf", `
# nats-server's syntax
SECONDS = 30
listen: 127.0.0.1:4333
http = 127.0.0.1:8333
Server_Name bus-1
max_payload: 2MB
ping_interval: "1m"
write_deadline: $SECONDS
debug: true
trace: false
jetstream {
  store_dir: "/tmp/js"
  max_memory_store: 1GB
  max_file_store: 10G
  domain: hub
}
include ./auth.conf
mappings {
  "Orders.New": "orders.created"
}
accounts {
  SYS { users = [{user: admin, password: pw}] }
}
system_account: SYS
leafnodes {
  remotes = [{url: "nats://hub.example.com:7422"}]
}
`)
	got, err := Load(path, nil)
	if err != nil {
		t.Fatalf("Load %s: %v", path, err)
	}
	if got.Host != "127.0.0.1" || got.Port != 4333 || got.HTTPPort != 8333 || got.ServerName != "bus-1" {
		t.Errorf("listen/http/server_name: host %q port %d http_port %d name %q", got.Host, got.Port, got.HTTPPort, got.ServerName)
	}
	if got.MaxPayload != 2<<20 || got.PingInterval != time.Minute || got.WriteDeadline != 30*time.Second {
		t.Errorf("max_payload %d ping_interval %v write_deadline %v", got.MaxPayload, got.PingInterval, got.WriteDeadline)
	}
	if got.LogLevel.String() != "DEBUG" {
		t.Errorf("debug: true gave log level %v", got.LogLevel)
	}
	js := JetStream{Enabled: true, Domain: "hub", MaxMemory: 1 << 30, MaxStore: 10_000_000_000, Limits: Default().JetStream.Limits}
	if got.StoreDir != "/tmp/js" || !reflect.DeepEqual(got.JetStream, js) {
		t.Errorf("jetstream %+v store_dir %q", got.JetStream, got.StoreDir)
	}
	a := got.Authorization
	if a == nil || len(a.Users) != 2 || a.Users[0].Password != "s3cr3t-from-env" ||
		!strings.HasPrefix(a.Users[1].Password, "$2a$11$") ||
		!reflect.DeepEqual(a.Users[0].Permissions.Subscribe.Allow, []string{"_INBOX.>", "orders.*"}) {
		t.Errorf("authorization %+v", a)
	}
	if got.Mappings == nil || got.Mappings.Entries[0].Source != "Orders.New" {
		t.Errorf("mappings %+v (the subject keeps its case)", got.Mappings)
	}
	if got.SystemAccount != "SYS" || got.Account("SYS") == nil {
		t.Errorf("system account %q, accounts %+v", got.SystemAccount, got.Accounts)
	}
	if got.LeafNodes == nil || len(got.LeafNodes.Remotes) != 1 {
		t.Errorf("leafnodes %+v", got.LeafNodes)
	}
	if keys := IgnoredKeys(path); keys != nil {
		t.Errorf("IgnoredKeys %v for a file without tuning keys", keys)
	}
}

// nats-server's logging keys set bus's, aliases included.
func TestLoadNATSConfLogging(t *testing.T) {
	t.Parallel()
	got, err := Load(writeConfig(t, "nats.conf", `
debug: true
trace: true
trace_headers: true
max_traced_msg_len: 64
logtime: false
logtime_utc: true
logfile: "/var/log/bus.log"
log_size_limit: 10MB
log_max_num: 3
syslog: false
remote_syslog: "tcp://logs.example.com:514"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.LogLevel != slog.LevelDebug || !got.Trace || !got.TraceHeaders || got.MaxTracedMsgLen != 64 ||
		got.LogTime || !got.LogTimeUTC || got.LogFile != "/var/log/bus.log" || got.LogSizeLimit != 10<<20 ||
		got.LogMaxFiles != 3 || got.RemoteSyslog != "tcp://logs.example.com:514" {
		t.Errorf("logging keys: %+v", got)
	}
	for remote, want := range map[string]string{"logs:514": "udp logs:514", "tcp://logs:601": "tcp logs:601", "unix:///dev/log": "unix /dev/log"} {
		network, addr, err := SyslogAddr(remote)
		if err != nil || network+" "+addr != want {
			t.Errorf("SyslogAddr(%q) = %s %s, %v; want %s", remote, network, addr, err, want)
		}
	}
}

// client_advertise and no_header_support mean what they mean to
// nats-server (the server's tests compare them with the reference).
func TestLoadNATSConfAdvertiseAndHeaders(t *testing.T) {
	t.Parallel()
	got, err := Load(writeConfig(t, "nats.conf", "client_advertise: \"nats.example.com\"\nno_header_support: true\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClientAdvertise != "nats.example.com" || !got.NoHeaderSupport {
		t.Errorf("client_advertise %q, no_header_support %v", got.ClientAdvertise, got.NoHeaderSupport)
	}
}

// Keys bus does not implement are refused naming the key and what to do;
// tuning keys are accepted and listed; every problem is reported.
func TestLoadNATSConfRefusesWhatBusLacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		key        string
		sentinel   error
		reason     string // substring of the error
	}{
		{"cluster", "cluster { port: 6222 }", "cluster", ErrUnsupportedKey, "leafnodes.remotes"},
		{"remote_syslog_bad", `remote_syslog: "http://logs:514"`, "remote_syslog", ErrOutOfRange, "udp://"},
		{"logfile_max_num_negative", "logfile_max_num: -1", "logfile_max_num", ErrOutOfRange, "negative"},
		{"websocket_cookie", "websocket { port: 8080, no_tls: true, jwt_cookie: jwt }", "websocket.jwt_cookie", ErrOutOfRange, "JWT"},
		{"websocket_no_tls", "websocket { port: 8080 }", "websocket", ErrBadValue, "no_tls"},
		{"jetstream_tpm", "jetstream { tpm { keys_file: /k } }", "jetstream.tpm", ErrUnsupportedKey, "TPM"},
		{"http_host_differs", "http: localhost:8222", "http", ErrUnsupportedKey, "client interface (0.0.0.0)"},
		{"listen_and_port", "listen: 0.0.0.0:4222\nport: 4333", "listen", ErrDuplicateKey, "port"},
		{"listen_bad", "listen: nowhere", "listen", ErrBadValue, "host:port"},
		{"client_advertise_bad", `client_advertise: "addr:::123"`, "client_advertise", ErrOutOfRange, "host:port"},
		{"typo", "max_paylod: 1MB", "max_paylod", ErrUnknownKey, `did you mean "max_payload"`},
		{"unused_variable", "UNUSED = 5", "unused", ErrUnknownKey, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, "nats.conf", tt.text), nil)
			errs := keyErrors(t, err)
			i := slices.IndexFunc(errs, func(e *KeyError) bool { return e.Key == tt.key })
			if i < 0 {
				t.Fatalf("no error for %q; got %v", tt.key, err)
			}
			if !errors.Is(errs[i], tt.sentinel) || !strings.Contains(errs[i].Error(), tt.reason) {
				t.Errorf("error %q, want %v containing %q", errs[i], tt.sentinel, tt.reason)
			}
		})
	}

	path := writeConfig(t, "nats.conf", "no_sublist_cache: true\nmax_traced_msg_len: 100\njetstream { max_buffered_msgs: 10000 }\ntrace: false\nsyslog: false\nhttp: 8222\nlisten: 4222\n")
	if _, err := Load(path, nil); err != nil {
		t.Fatalf("tuning keys and off values refused: %v", err)
	}
	if got, want := IgnoredKeys(path), []string{"jetstream.max_buffered_msgs", "no_sublist_cache"}; !slices.Equal(got, want) {
		t.Errorf("IgnoredKeys %v, want %v", got, want)
	}
}

// An include the parser would follow forever is refused instead of
// crashing the process with a stack overflow.
func TestLoadNATSConfIncludeCycle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.conf"), filepath.Join(dir, "b.conf")
	if err := os.WriteFile(a, []byte("port: 1\ninclude b.conf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("include 'a.conf'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(a, nil); err == nil || !strings.Contains(err.Error(), "include cycle") {
		t.Fatalf("include cycle: %v", err)
	}
	// nats-server reads an include relative to the file, even one
	// written absolute, so /dev/zero is dir/dev/zero: a directory here.
	if err := os.MkdirAll(filepath.Join(dir, "dev", "zero"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("include /dev/zero\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(b, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("include of a device: %v", err)
	}
	// Each file includes the next eight times: 8^6 parses without the
	// bound.
	for i := range 6 {
		body := strings.Repeat(fmt.Sprintf("include f%d.conf\n", i+1), 8)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.conf", i)), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f6.conf"), []byte("port: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "f0.conf"), nil); err == nil || !strings.Contains(err.Error(), "more than 256 includes") {
		t.Fatalf("include fan-out: %v", err)
	}
	if _, err := Load(writeConfig(t, "bad.conf", "port: {"), nil); err == nil || !strings.Contains(err.Error(), "bad.conf") {
		t.Fatalf("syntax error: %v", err)
	}
}

// A .conf file means what it means to nats-server when it leaves keys
// out: no JetStream and no monitoring port, unless a flag asks.
func TestLoadNATSConfDefaultsAreNATSServers(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "nats.conf", "port: 4333\n")
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.JetStream.Enabled || cfg.HTTPPort != 0 {
		t.Errorf("jetstream %v, http_port %d; want off and 0", cfg.JetStream.Enabled, cfg.HTTPPort)
	}
	cfg, err = Load(path, parseFlags(t, "--jetstream", "--http-port", "8333"))
	if err != nil || !cfg.JetStream.Enabled || cfg.HTTPPort != 8333 {
		t.Errorf("flags over the file: %v, jetstream %v, http_port %d", err, cfg.JetStream.Enabled, cfg.HTTPPort)
	}
}

// nats-server's documented pattern: permission sets as variables inside
// the authorization block, referenced by each user.
func TestLoadNATSConfPermissionVariables(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "nats.conf", `
authorization {
  ADMIN = { publish = ">", subscribe = ">" }
  REQUESTOR = { publish = ["req.a", "req.b"], subscribe = "_INBOX.>" }
  users = [
    {user: admin, password: a, permissions: $ADMIN}
    {user: client, password: c, permissions: $REQUESTOR}
  ]
}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	u := cfg.Authorization.Users
	if len(u) != 2 || u[0].Permissions.Publish.Allow[0] != ">" || len(u[1].Permissions.Publish.Allow) != 2 {
		t.Fatalf("users %+v", u)
	}
}
