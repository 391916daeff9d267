package conf

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Precedence tests set environment variables, so they cannot be parallel.
func TestLoadPrecedence(t *testing.T) {
	file := writeConfig(t, "bus.yaml", `
port: 1111
max_payload: 1KB
ping_interval: 1s
log_level: debug
`)
	tests := []struct {
		name  string
		env   map[string]string
		flags []string
		want  func(c *Config)
	}{
		{
			name: "file_over_defaults",
			want: func(c *Config) {
				c.Port, c.MaxPayload, c.PingInterval, c.LogLevel = 1111, 1024, time.Second, slog.LevelDebug
			},
		},
		{
			name: "env_over_file",
			env:  map[string]string{"BUS_PORT": "2222", "BUS_MAX_PAYLOAD": "2KB", "BUS_PING_INTERVAL": "2s", "BUS_LOG_LEVEL": "warn"},
			want: func(c *Config) {
				c.Port, c.MaxPayload, c.PingInterval, c.LogLevel = 2222, 2048, 2*time.Second, slog.LevelWarn
			},
		},
		{
			name:  "flag_over_env",
			env:   map[string]string{"BUS_PORT": "2222", "BUS_MAX_PAYLOAD": "2KB", "BUS_PING_INTERVAL": "2s", "BUS_LOG_LEVEL": "warn"},
			flags: []string{"--port", "3333", "--max-payload=3KB", "--ping-interval", "3s", "--log-level", "error"},
			want: func(c *Config) {
				c.Port, c.MaxPayload, c.PingInterval, c.LogLevel = 3333, 3072, 3*time.Second, slog.LevelError
			},
		},
		{
			name:  "each_key_from_its_own_source",
			env:   map[string]string{"BUS_MAX_PAYLOAD": "2KB"},
			flags: []string{"--ping-interval", "3s"},
			want: func(c *Config) {
				c.Port, c.MaxPayload, c.PingInterval, c.LogLevel = 1111, 2048, 3*time.Second, slog.LevelDebug
			},
		},
		{
			name: "empty_env_is_unset",
			env:  map[string]string{"BUS_PORT": ""},
			want: func(c *Config) {
				c.Port, c.MaxPayload, c.PingInterval, c.LogLevel = 1111, 1024, time.Second, slog.LevelDebug
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := Load(file, parseFlags(t, tt.flags...))
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			tt.want(&want)
			if got != want {
				t.Errorf("Load:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestLoadWithoutFileOrFlags(t *testing.T) {
	got, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != Default() {
		t.Errorf("Load(\"\", nil) = %+v, want Default() %+v", got, Default())
	}
}

func TestLoadFormats(t *testing.T) {
	t.Parallel()
	want := Default()
	want.Host = "127.0.0.1"
	want.Port = 5555
	want.ServerName = "east-1"
	want.MaxPayload = 2 << 20
	want.MaxPending = 100_000_000
	want.PingInterval = 30 * time.Second
	want.WriteDeadline = 5 * time.Second
	want.LogFormat = LogJSON

	tests := []struct{ name, file, content string }{
		{"yaml", "bus.yaml", `
host: 127.0.0.1
port: 5555
server_name: east-1
max_payload: 2MB
max_pending: 100m
ping_interval: 30s
write_deadline: 5     # seconds, as nats-server accepts
log_format: json
`},
		{"yml_with_upper_case_keys_and_values", "bus.YML", `
HOST: 127.0.0.1
Port: "5555"
server_name: east-1
max_payload: 2mb
max_pending: 100M
ping_interval: 30s
write_deadline: 5s
log_format: JSON
`},
		{"toml", "bus.toml", `
# TOML comment
host = "127.0.0.1"
port = 5555
server_name = "east-1"
max_payload = "2MB"
max_pending = 100000000
ping_interval = "30s"
write_deadline = 5
log_format = "json"
`},
		{"json", "bus.json", `{
  "host": "127.0.0.1",
  "port": 5555,
  "server_name": "east-1",
  "max_payload": "2MiB",
  "max_pending": 100000000,
  "ping_interval": "30s",
  "write_deadline": "5s",
  "log_format": "json"
}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Load(writeConfig(t, tt.file, tt.content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("Load:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestLoadEmptyFileIsDefault(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, file, content string }{
		{"yaml_comments", "bus.yaml", "# nothing here yet\n\n   # indented comment\n"},
		{"yaml_empty", "bus.yaml", ""},
		{"yaml_document_marker", "bus.yaml", "---\n# only a marker\n"},
		{"toml_comments", "bus.toml", "# nothing\n# here\n"},
		{"json_empty", "bus.json", ""},
		{"json_whitespace", "bus.json", "\n  \t\n"},
		{"json_empty_object", "bus.json", "{}"},
		{"yaml_key_without_value", "bus.yaml", "port:\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Load(writeConfig(t, tt.file, tt.content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != Default() {
				t.Errorf("Load = %+v, want Default() %+v", got, Default())
			}
		})
	}
}

func TestLoadNATSServerAliases(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "bus.yaml", `
net: 127.0.0.1
monitor_port: 0
storedir: /var/lib/bus
max_conn: 10
max_subs: 3
ping_max: 5
`)
	got, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Host, want.HTTPPort, want.StoreDir = "127.0.0.1", 0, "/var/lib/bus"
	want.MaxConnections, want.MaxSubscriptions, want.MaxPingsOut = 10, 3, 5
	if got != want {
		t.Errorf("Load:\n got %+v\nwant %+v", got, want)
	}
}

func TestLoadPortsPickingFreePorts(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"0", "-1"} {
		got, err := Load("", parseFlags(t, "--port", p, "--http-port", p))
		if err != nil {
			t.Fatalf("port %s: %v", p, err)
		}
		if want := Default(); got.Port == want.Port || got.HTTPPort == want.HTTPPort {
			t.Errorf("port %s: got port %d, http_port %d", p, got.Port, got.HTTPPort)
		}
	}
}

func TestJetStreamKeyTakesBooleansAndNatsServerWords(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want bool
	}{{true, true}, {false, false}, {"enabled", true}, {"disabled", false}, {"false", false}} {
		var got bool
		if err := (boolValue{&got}).set(tc.in); err != nil || got != tc.want {
			t.Errorf("set(%v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	var b bool
	if err := (boolValue{&b}).set("maybe"); err == nil {
		t.Error("set(maybe) succeeded")
	}
}

func TestJetStreamBlock(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "bus.yaml", `
jetstream:
  store_dir: /tmp/js
  max_mem: 1GB
  max_file_store: 10GB
  domain: hub
  sync_interval: 10s
  max_index_memory: 128MB
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := JetStream{Enabled: true, Domain: "hub", MaxMemory: 1 << 30, MaxStore: 10 << 30, SyncInterval: 10 * time.Second, MaxIndexMemory: 128 << 20}
	if cfg.JetStream != want || cfg.StoreDir != "/tmp/js" {
		t.Fatalf("jetstream %+v, store_dir %q; want %+v and /tmp/js", cfg.JetStream, cfg.StoreDir, want)
	}
	cfg, err = Load(writeConfig(t, "bus.yaml", "jetstream:\n  enabled: false\n  sync_interval: always\n"), nil)
	if err != nil || cfg.JetStream.Enabled || cfg.JetStream.SyncInterval != 0 {
		t.Fatalf("enabled false: %+v %v", cfg.JetStream, err)
	}
	for _, bad := range []string{
		"jetstream:\n  nope: 1\n",
		"jetstream:\n  domain: a.b\n",
		"jetstream:\n  max_file_store: lots\n",
		"jetstream:\n  sync_interval: sometimes\n",
		"jetstream:\n  max_index_memory: 1KB\n",
		"jetstream:\n  max_index_memory: lots\n",
	} {
		if _, err := Load(writeConfig(t, "bus.yaml", bad), nil); err == nil || !strings.Contains(err.Error(), "jetstream") {
			t.Errorf("%q: error %v, want one naming jetstream", bad, err)
		}
	}
}
