package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// nats-server's command line, as an operator types it, becomes bus's
// (issue 23).
func TestNATSArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want []string
	}{
		{[]string{"-c", "nats.conf"}, []string{"serve", "--config", "nats.conf"}},
		{[]string{"serve", "-c", "nats.conf"}, []string{"serve", "--config", "nats.conf"}},
		{[]string{"-p", "4333", "-m", "8333", "-ms", "8443", "-a", "127.0.0.1"},
			[]string{"serve", "--port", "4333", "--http-port", "8333", "--https-port", "8443", "--host", "127.0.0.1"}},
		{[]string{"--addr=0.0.0.0", "--net", "::", "--port=1", "--http_port", "2"},
			[]string{"serve", "--host=0.0.0.0", "--host", "::", "--port=1", "--http-port", "2"}},
		{[]string{"-js", "-sd", "/data", "-n", "n1", "-D", "-T"},
			[]string{"serve", "--jetstream", "--store-dir", "/data", "--server-name", "n1", "--log-level=debug", "--logtime"}},
		{[]string{"-V", "-DV", "-VV", "-DVV", "--trace"},
			[]string{"serve", "--trace", "--log-level=debug", "--trace", "--trace-verbose", "--log-level=debug", "--trace-verbose", "--trace"}},
		{[]string{"-l", "/var/log/bus.log", "--log_size_limit", "10MB", "--log_max_num", "3", "-T=false", "-s", "-r", "udp://logs:514", "--max_traced_msg_len", "64"},
			[]string{"serve", "--log-file", "/var/log/bus.log", "--logfile-size-limit", "10MB", "--logfile-max-num", "3", "--logtime=false",
				"--syslog", "--remote-syslog", "udp://logs:514", "--max-traced-msg-len", "64"}},
		{[]string{"--client_advertise", "edge:4222", "--syslog", "false"},
			[]string{"serve", "--client-advertise", "edge:4222", "--syslog=false"}},
		{[]string{"serve", "--store_dir", "/d", "--max_payload=2MB", "-P", "/run/bus.pid", "--pid", "x"},
			[]string{"serve", "--store-dir", "/d", "--max-payload=2MB", "--pid-file", "/run/bus.pid", "--pid-file", "x"}},
		{[]string{"--user", "u", "--pass", "-p", "--auth", "t", "--tls", "--tlscert", "c.pem", "--tlsverify"},
			[]string{"serve", "--user", "u", "--pass", "-p", "--auth", "t", "--tls", "--tlscert", "c.pem", "--tlsverify"}},
		{[]string{"serve", "--jetstream", "false", "--http_auth", "--log_level", "warn"},
			[]string{"serve", "--jetstream=false", "--http-auth", "--log-level", "warn"}},
		{[]string{"serve", "--", "-p"}, []string{"serve", "--", "-p"}},
		{[]string{"-v"}, []string{"--version"}},
		{[]string{"-p", "1", "--version"}, []string{"--version"}},
		{[]string{"serve", "-v"}, []string{"--version"}},
		{[]string{"-h"}, []string{"-h"}},
		{[]string{"serve", "-h"}, []string{"serve", "--help"}},
		{[]string{"version"}, []string{"version"}},
		{[]string{"dlq", "-p", "x"}, []string{"dlq", "-p", "x"}},
		{nil, nil},
	}
	for _, tt := range tests {
		got, err := natsArgs(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("natsArgs(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range [][]string{{"--signal", "stop"}, {"--routes", "nats://a"}, {"serve", "--cluster", "nats://0.0.0.0:6222"}} {
		_, err := natsArgs(in)
		if err == nil || !strings.Contains(err.Error(), strings.SplitN(in[len(in)-1], "=", 2)[0]) && !strings.Contains(err.Error(), in[0]) && !strings.Contains(err.Error(), in[1%len(in)]) {
			t.Errorf("natsArgs(%q): %v, want a refusal naming the flag", in, err)
		}
	}
}

// bus -c nats.conf starts on a nats-server config file, and the flags
// beat the file, as in nats-server.
func TestServeNATSConfAndFlags(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "nats.conf")
	text := "listen: 127.0.0.1:1\nhttp: 0\nserver_name: from-file\njetstream { store_dir: " + strconv.Quote(filepath.Join(dir, "js")) + " }\nno_sublist_cache: true\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startBus(t, nil, "-c", path, "-p", strconv.Itoa(port), "-n", "from-flag", "-D")
	p.waitServing(t)
	out := p.stderr.String()
	if m := clientAddrRE.FindStringSubmatch(out); m == nil || m[1] != "127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("serving on %v, want -p %d over the file's listen; stderr:\n%s", m, port, out)
	}
	if !strings.Contains(out, "no_sublist_cache") || !strings.Contains(out, "level=DEBUG") {
		t.Errorf("want a warning naming the tuning key and debug logs (-D); stderr:\n%s", out)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}

}
