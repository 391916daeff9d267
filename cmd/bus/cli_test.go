package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bus-dev/bus/server"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		p := runBus(t, nil, args...)
		if p.code != exitOK {
			t.Fatalf("bus %q: exit %d; stderr:\n%s", args, p.code, p.stderr)
		}
		out := p.stdout.String()
		if !strings.HasPrefix(out, "bus "+server.Version+" (") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("bus %q printed %q, want the server version %s and %s", args, out, server.Version, runtime.Version())
		}
	}
}

// writeFile writes content to name in a new temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every mistake in the command line or the configuration exits 2 before
// anything listens, with the offending flag or key named on stderr.
func TestUsageAndConfigErrorsExitTwo(t *testing.T) {
	t.Parallel()
	badKey := writeFile(t, "bus.yaml", "prot: 4222\n")
	badValue := writeFile(t, "bus.yaml", "max_payload: abc\n")
	badRange := writeFile(t, "bus.toml", "port = 70000\n")
	badSyntax := writeFile(t, "bus.json", `{"port": }`)
	tests := []struct {
		name string
		env  []string
		args []string
		want []string // substrings of stderr
	}{
		{"unknown_flag", nil, []string{"serve", "--prot", "4222"}, []string{"unknown flag: --prot", "bus serve --help"}},
		{"unknown_command", nil, []string{"srve"}, []string{`unknown command "srve"`, "serve"}},
		{"extra_argument", nil, []string{"serve", "now"}, []string{`unknown command "now"`}},
		{"flag_without_value", nil, []string{"serve", "--port"}, []string{"flag needs an argument: --port"}},
		{"unknown_key_in_file", nil, []string{"serve", "--config", badKey},
			[]string{`conf: unknown key "prot" in file ` + badKey + ` (did you mean "port"?)`}},
		{"bad_value_in_file", nil, []string{"serve", "--config", badValue},
			[]string{`conf: max_payload: "abc" is not a size (from file ` + badValue + `)`}},
		{"out_of_range_in_file", nil, []string{"serve", "-c", badRange}, []string{"conf: port: 70000 is out of range"}},
		{"syntax_error_in_file", nil, []string{"serve", "--config", badSyntax}, []string{"conf: parse " + badSyntax}},
		{"missing_file", nil, []string{"serve", "--config", "/nonexistent/bus.yaml"}, []string{"conf: read config", "/nonexistent/bus.yaml"}},
		{"bad_flag_value", nil, []string{"serve", "--max-payload", "lots"},
			[]string{`conf: max_payload: "lots" is not a size (from flag --max-payload)`}},
		{"bad_env_value", []string{"BUS_PING_INTERVAL=soon"}, []string{"serve"},
			[]string{`conf: ping_interval: "soon" is not a duration (from env BUS_PING_INTERVAL)`}},
		{"unknown_env", []string{"BUS_MAX_PAYLAOD=1MB"}, []string{"serve"},
			[]string{`conf: unknown key "BUS_MAX_PAYLAOD" in environment (did you mean "BUS_MAX_PAYLOAD"?)`}},
		{"every_problem_at_once", nil, []string{"serve", "--port", "-5", "--log-level", "loud", "--http-port", "x"},
			[]string{"conf: port:", "conf: http_port:", "conf: log_level:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := runBus(t, tt.env, tt.args...)
			stderr := p.stderr.String()
			if p.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", p.code, exitUsage, stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "serving") {
				t.Errorf("bus started serving despite the error:\n%s", stderr)
			}
		})
	}
}
