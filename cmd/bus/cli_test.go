package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/bus-dev/bus/server"
)

// bus version says what bus itself is (the module version and commit the
// go command stamped into the binary, read back here with go version -m),
// then the nats-server version it speaks, which is what INFO carries.
func TestVersion(t *testing.T) {
	t.Parallel()
	stamped, err := exec.Command("go", "version", "-m", busBin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	want := "bus " + stampedVersion(t, string(stamped))
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		p := runBus(t, nil, args...)
		if p.code != exitOK {
			t.Fatalf("bus %q: exit %d; stderr:\n%s", args, p.code, p.stderr)
		}
		lines := strings.Split(strings.TrimSpace(p.stdout.String()), "\n")
		if len(lines) != 3 || lines[0] != want ||
			lines[1] != "speaks nats-server "+server.Version+" (the version clients see in INFO)" ||
			!strings.Contains(lines[2], runtime.Version()) {
			t.Errorf("bus %q printed %q, want %q, then nats-server %s, then %s", args, lines, want, server.Version, runtime.Version())
		}
	}
}

// stampedVersion is what the first line of bus version must say, from the
// binary's build information as go version -m prints it.
func stampedVersion(t *testing.T, m string) string {
	t.Helper()
	var mod, rev, modified string
	for _, line := range strings.Split(m, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			mod = f[2]
		case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			rev = strings.TrimPrefix(f[1], "vcs.revision=")[:12]
		case len(f) >= 2 && f[0] == "build" && f[1] == "vcs.modified=true":
			modified = ", modified"
		}
	}
	if mod == "" {
		t.Fatalf("go version -m shows no main module:\n%s", m)
	}
	if rev == "" {
		return mod
	}
	return mod + " (commit " + rev + modified + ")"
}

// The build settings the go command may or may not stamp all show: this
// machine's toolchain stamps no VCS information, so the commit half is
// checked on built-up BuildInfo values.
func TestBuildVersion(t *testing.T) {
	t.Parallel()
	rev := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"release", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"release_with_commit", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}},
			"v1.4.0 (commit 0123456789ab)"},
		{"checkout_modified", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}},
			"(devel) (commit 0123456789ab, modified)"},
		{"no_version", &debug.BuildInfo{}, "(devel)"},
		{"no_build_info", nil, "unknown"},
	}
	for _, tt := range tests {
		if got := buildVersion(tt.info, tt.info != nil); got != tt.want {
			t.Errorf("%s: buildVersion = %q, want %q", tt.name, got, tt.want)
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
