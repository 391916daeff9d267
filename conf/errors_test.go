package conf

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestLoadKeyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string
		flags   []string
		wantErr error
		wantKey string
		wantMsg string // the whole message, with FILE standing for "file <path>"
	}{
		// Unknown keys.
		{"unknown_key_with_hint", "prot: 4222", nil, ErrUnknownKey, "prot",
			`conf: unknown key "prot" in FILE (did you mean "port"?)`},
		{"unknown_key_hint_by_substring", "payload: 1MB", nil, ErrUnknownKey, "payload",
			`conf: unknown key "payload" in FILE (did you mean "max_payload"?)`},
		{"unknown_key_without_hint", "frobnicate: true", nil, ErrUnknownKey, "frobnicate",
			`conf: unknown key "frobnicate" in FILE`},
		{"unknown_section", "routing:\n  port: 6222", nil, ErrUnknownKey, "routing",
			`conf: unknown key "routing" in FILE`},
		// Nested typos get the hint from their own block's keys.
		{"nested_unknown_key_with_hint", "jetstream:\n  store_dri: /tmp/x", nil, ErrBadValue, "jetstream",
			`conf: jetstream: store_dri: unknown key, did you mean "store_dir"? (from FILE)`},
		{"nested_limits_unknown_key_with_hint", "jetstream:\n  limits:\n    max_ack_pnding: 5", nil, ErrBadValue, "jetstream",
			`conf: jetstream: limits: max_ack_pnding: unknown key, did you mean "max_ack_pending"? (from FILE)`},
		{"nested_unknown_key_without_hint", "jetstream:\n  frobnicate: true", nil, ErrBadValue, "jetstream",
			`conf: jetstream: frobnicate: unknown key (from FILE)`},
		{"alias_and_key_both_set", "ping_max: 3\nmax_pings_out: 4", nil, ErrDuplicateKey, "ping_max",
			`conf: ping_max: is another name for max_pings_out, which is also set (from FILE)`},

		// Wrong types and unparsable values.
		{"size_not_a_size", "max_payload: abc", nil, ErrBadValue, "max_payload",
			`conf: max_payload: "abc" is not a size (from FILE)`},
		{"size_fraction", "max_payload: 1.5MB", nil, ErrBadValue, "max_payload",
			`conf: max_payload: "1.5MB" is not a size (from FILE)`},
		{"size_unknown_unit", "max_pending: 10XB", nil, ErrBadValue, "max_pending",
			`conf: max_pending: "10XB" is not a size (from FILE)`},
		{"size_overflows", "max_pending: 9EB", nil, ErrBadValue, "max_pending",
			`conf: max_pending: "9EB" is not a size (from FILE)`},
		{"int_not_a_number", "port: abc", nil, ErrBadValue, "port",
			`conf: port: "abc" is not an integer (from FILE)`},
		{"int_float", "port: 42.5", nil, ErrBadValue, "port",
			`conf: port: 42.5 is not an integer (from FILE)`},
		{"int_bool", "max_connections: true", nil, ErrBadValue, "max_connections",
			`conf: max_connections: true is not an integer (from FILE)`},
		{"int_list", "port: [1, 2]", nil, ErrBadValue, "port",
			`conf: port: a list is not an integer (from FILE)`},
		{"int_map", "port: {a: 1}", nil, ErrBadValue, "port",
			`conf: port: a map is not an integer (from FILE)`},
		{"string_number", "host: 12", nil, ErrBadValue, "host",
			`conf: host: 12 is not a string (from FILE)`},
		{"duration_words", "ping_interval: 2 minutes", nil, ErrBadValue, "ping_interval",
			`conf: ping_interval: "2 minutes" is not a duration (from FILE)`},
		{"duration_fraction_of_seconds", "write_deadline: 1.5", nil, ErrBadValue, "write_deadline",
			`conf: write_deadline: 1.5 is not a duration (from FILE)`},
		{"level_unknown", "log_level: verbose", nil, ErrBadValue, "log_level",
			`conf: log_level: "verbose" is not one of debug, info, warn, error (from FILE)`},
		{"level_offset", "log_level: info+2", nil, ErrBadValue, "log_level",
			`conf: log_level: "info+2" is not one of debug, info, warn, error (from FILE)`},
		{"format_unknown", "log_format: xml", nil, ErrBadValue, "log_format",
			`conf: log_format: "xml" is not one of text, json (from FILE)`},
		{"bad_flag_value", "", []string{"--max-payload", "lots"}, ErrBadValue, "max_payload",
			`conf: max_payload: "lots" is not a size (from flag --max-payload)`},
		{"bad_flag_over_good_file", "port: 1", []string{"--port=x"}, ErrBadValue, "port",
			`conf: port: "x" is not an integer (from flag --port)`},

		// Out of range.
		{"port_too_big", "port: 70000", nil, ErrOutOfRange, "port",
			`conf: port: 70000 is out of range 0..65535 (or -1 for a free port) (from FILE)`},
		{"port_too_small", "port: -2", nil, ErrOutOfRange, "port",
			`conf: port: -2 is out of range 0..65535 (or -1 for a free port) (from FILE)`},
		{"http_port_too_big", "", []string{"--http-port", "65536"}, ErrOutOfRange, "http_port",
			`conf: http_port: 65536 is out of range 0..65535 (or -1 for a free port) (from flag --http-port)`},
		{"http_auth_without_users", "http_auth: true", nil, ErrOutOfRange, "http_auth",
			`conf: http_auth: needs the authorization block (users, a user or a token) to check credentials against (from FILE)`},
		{"http_auth_not_a_bool", "http_auth: maybe", nil, ErrBadValue, "http_auth",
			`conf: http_auth: "maybe" is not a boolean (true/false, enabled/disabled) (from FILE)`},
		{"host_empty", `host: ""`, nil, ErrOutOfRange, "host",
			`conf: host: must not be empty (from FILE)`},
		{"server_name_with_space", `server_name: "east 1"`, nil, ErrOutOfRange, "server_name",
			`conf: server_name: "east 1" must not contain spaces (from FILE)`},
		{"store_dir_empty", `store_dir: " "`, nil, ErrOutOfRange, "store_dir",
			`conf: store_dir: must not be empty (from FILE)`},
		{"max_payload_zero", "max_payload: 0", nil, ErrOutOfRange, "max_payload",
			`conf: max_payload: 0 must be more than 0 (from FILE)`},
		{"max_payload_negative", "max_payload: -1KB", nil, ErrOutOfRange, "max_payload",
			`conf: max_payload: -1KB must be more than 0 (from FILE)`},
		{"max_payload_over_limit", "max_payload: 65MB\nmax_pending: 1GB", nil, ErrOutOfRange, "max_payload",
			`conf: max_payload: 65MB is more than the 64MB limit (from FILE)`},
		{"max_payload_over_max_pending", "max_payload: 2MB\nmax_pending: 1MB", nil, ErrOutOfRange, "max_payload",
			`conf: max_payload: 2MB is more than max_pending (1MB) (from FILE)`},
		{"max_payload_default_over_lowered_max_pending", "max_pending: 512KB", nil, ErrOutOfRange, "max_payload",
			`conf: max_payload: 1MB is more than max_pending (512KB)`},
		{"max_control_line_zero", "max_control_line: 0", nil, ErrOutOfRange, "max_control_line",
			`conf: max_control_line: 0 must be more than 0 (from FILE)`},
		{"max_control_line_over_int32", "max_control_line: 2GB", nil, ErrOutOfRange, "max_control_line",
			`conf: max_control_line: 2GB is more than 2147483647 bytes (from FILE)`},
		{"max_connections_zero", "max_conn: 0", nil, ErrOutOfRange, "max_connections",
			`conf: max_connections: 0 must be more than 0 (from FILE)`},
		{"max_subscriptions_negative", "max_subscriptions: -1", nil, ErrOutOfRange, "max_subscriptions",
			`conf: max_subscriptions: -1 is negative (0 means unlimited) (from FILE)`},
		{"max_pending_zero", "max_pending: 0", nil, ErrOutOfRange, "max_pending",
			`conf: max_pending: 0 must be more than 0 (from FILE)`},
		{"ping_interval_zero", "ping_interval: 0s", nil, ErrOutOfRange, "ping_interval",
			`conf: ping_interval: 0s must be more than 0 (from FILE)`},
		{"max_pings_out_zero", "ping_max: 0", nil, ErrOutOfRange, "max_pings_out",
			`conf: max_pings_out: 0 must be more than 0 (from FILE)`},
		{"write_deadline_negative", "write_deadline: -1s", nil, ErrOutOfRange, "write_deadline",
			`conf: write_deadline: -1s must be more than 0 (from FILE)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, "bus.yaml", tt.yaml)
			cfg, err := Load(path, parseFlags(t, tt.flags...))
			if err == nil {
				t.Fatalf("Load succeeded with %+v, want error", cfg)
			}
			if cfg != (Config{}) {
				t.Errorf("Load returned %+v with an error, want the zero Config", cfg)
			}
			errs := keyErrors(t, err)
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1:\n%v", len(errs), err)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if errs[0].Key != tt.wantKey {
				t.Errorf("Key = %q, want %q", errs[0].Key, tt.wantKey)
			}
			if want := strings.ReplaceAll(tt.wantMsg, "FILE", "file "+path); err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
		})
	}
}

// Environment tests cannot be parallel.
func TestLoadEnvErrors(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr error
		wantMsg string
	}{
		{"unknown_variable_with_hint", map[string]string{"BUS_PROT": "4222"}, ErrUnknownKey,
			`conf: unknown key "BUS_PROT" in environment (did you mean "BUS_PORT"?)`},
		{"unknown_variable", map[string]string{"BUS_COLOUR": "blue"}, ErrUnknownKey,
			`conf: unknown key "BUS_COLOUR" in environment`},
		{"bad_value", map[string]string{"BUS_MAX_PAYLOAD": "abc"}, ErrBadValue,
			`conf: max_payload: "abc" is not a size (from env BUS_MAX_PAYLOAD)`},
		{"out_of_range", map[string]string{"BUS_PORT": "99999"}, ErrOutOfRange,
			`conf: port: 99999 is out of range 0..65535 (or -1 for a free port) (from env BUS_PORT)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := Load("", nil)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if err == nil || err.Error() != tt.wantMsg {
				t.Errorf("error:\n got %v\nwant %s", err, tt.wantMsg)
			}
		})
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "bus.yaml", `
prot: 4222
port: abc
max_payload: 0
log_format: xml
`)
	_, err := Load(path, parseFlags(t, "--ping-interval", "soon"))
	var got []string
	for _, ke := range keyErrors(t, err) {
		got = append(got, ke.Key)
	}
	want := []string{"prot", "port", "max_payload", "ping_interval", "log_format"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("errors for keys %q, want %q; error:\n%v", got, want, err)
	}
	if n := strings.Count(err.Error(), "\n"); n != len(want)-1 {
		t.Errorf("error has %d lines, want one per problem:\n%v", n+1, err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, content string
		wantMsg             string // a substring
	}{
		{"unknown_extension", "bus.ini", "port = 1", `unknown format ".ini" (want .conf, .yaml, .yml, .toml or .json)`},
		{"no_extension", "bus", "port: 1", `unknown format ""`},
		{"yaml_syntax", "bus.yaml", "port: [1,\n", "conf: parse "},
		{"yaml_not_a_map", "bus.yaml", "- port\n", "conf: parse "},
		{"toml_syntax", "bus.toml", "port = = 1", "conf: parse "},
		{"json_syntax", "bus.json", `{"port": 1,}`, "conf: parse "},
		{"yaml_duplicate_key", "bus.yaml", "port: 1\nport: 2\n", "conf: parse "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, tt.file, tt.content), nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %v, want one containing %q", err, tt.wantMsg)
			}
			var ke *KeyError
			if errors.As(err, &ke) {
				t.Errorf("error %v is a *KeyError, want a file error", err)
			}
		})
	}
	t.Run("missing_file", func(t *testing.T) {
		t.Parallel()
		_, err := Load(t.TempDir()+"/nope.yaml", nil)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error %v is not fs.ErrNotExist", err)
		}
	})
}

func TestValidateNamesEveryBadField(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Port = 1 << 20
	c.LogFormat = "xml"
	c.LogLevel = 12
	err := c.Validate()
	var got []string
	for _, ke := range keyErrors(t, err) {
		if ke.Source != "" || !errors.Is(ke, ErrOutOfRange) {
			t.Errorf("%v: Source %q, want empty and ErrOutOfRange", ke, ke.Source)
		}
		got = append(got, ke.Key)
	}
	if want := "port log_level log_format"; strings.Join(got, " ") != want {
		t.Errorf("Validate reported keys %q, want %q", got, want)
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
}
