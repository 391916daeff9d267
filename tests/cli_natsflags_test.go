package tests

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// nats-server's command line over a .conf file: the flags beat the file,
// in bus as in the reference (issue 23). Each server gets its own free
// port from -p, and both get the same -n and --user/--pass.
//
// Not parallel: the reference's ConfigureOptions keeps the flags in a
// package global (FlagSnapshot) that its ReloadOptions merges into every
// later reload, so a reload test running beside this one got our -p and
// failed with "config reload not supported for Port". The global is
// cleared before any parallel test runs.
func TestCLINATSFlagsBeatTheFileLikeReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nats.conf")
	conf := "listen: 127.0.0.1:1\nserver_name: from-file\nmax_payload: 2MB\nauthorization { user: a, password: b }\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := func(port int) []string {
		return []string{"-c", path, "-p", strconv.Itoa(port), "-n", "from-flag", "--user", "u", "--pass", "p"}
	}

	busPort, refPort := freeTCPPort(t), freeTCPPort(t)
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	p := startBusArgs(t, bin, append(flags(busPort), "-m", "0")...)

	opts, err := natsserver.ConfigureOptions(flag.NewFlagSet("nats-server", flag.ContinueOnError), flags(refPort), nil, nil, nil)
	natsserver.FlagSnapshot = nil
	if err != nil {
		t.Fatalf("reference refuses the command line: %v", err)
	}
	opts.NoLog, opts.NoSigs = true, true
	ns := startReferenceServer(t, opts)

	if p != "127.0.0.1:"+strconv.Itoa(busPort) {
		t.Errorf("bus serves on %s, want -p %d", p, busPort)
	}
	busInfo, refInfo := info(t, p), info(t, ns.Addr().String())
	for _, f := range []string{"server_name", "max_payload", "auth_required", "port"} {
		b, r := field(busInfo, f), field(refInfo, f)
		if f == "port" {
			b, r = b == float64(busPort), r == float64(refPort)
		}
		if !jsonEqual(b, r) {
			t.Errorf("INFO %s: bus %v, reference %v", f, b, r)
		}
	}
	for _, addr := range []string{p, ns.Addr().String()} {
		connect(t, "nats://u:p@"+addr) // --user/--pass replace the file's a/b
	}
}

// startBusArgs runs the bus binary with args and returns its client
// address once it serves.
func startBusArgs(t *testing.T, bin string, args ...string) string {
	t.Helper()
	client, _ := startBusCommand(t, bin, args...)
	return client
}
