//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// bus ldm needs exactly one way to find the server, and a pid there.
func TestLDMCommandRefusesBadArguments(t *testing.T) {
	t.Parallel()
	garbage := filepath.Join(t.TempDir(), "bus.pid")
	if err := os.WriteFile(garbage, []byte("not a pid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ldm"},
		{"ldm", "--pid", "1", "--pid-file", garbage},
		{"ldm", "--pid-file", filepath.Join(t.TempDir(), "missing")},
		{"ldm", "--pid-file", garbage},
		{"ldm", "--pid", "-3"},
	} {
		p := runBus(t, nil, args...)
		if p.code != exitUsage {
			t.Errorf("bus %v: exit %d, want %d; stderr:\n%s", args, p.code, exitUsage, p.stderr)
		}
	}
}

// bus ldm (and SIGUSR2) drain a running server: it logs lame-duck mode
// and exits 0 once its clients are closed.
func TestLDMCommandDrainsServer(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"command", "signal"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "bus.pid")
			p := startBus(t, nil, "serve", "--port", "0", "--http-port", "0", "--host", "127.0.0.1",
				"--store-dir", t.TempDir(), "--lame-duck-duration", "1s", "--lame-duck-grace-period", "100ms",
				"--pid-file", pidFile)
			p.waitServing(t)
			pid := p.cmd.Process.Pid
			// serve wrote its pid file (pid_file, as nats-server's).
			if data, err := os.ReadFile(pidFile); err != nil || strings.TrimSpace(string(data)) != strconv.Itoa(pid) {
				t.Fatalf("pid file %q (%v), want %d", data, err, pid)
			}
			if how == "command" {
				ldm := runBus(t, nil, "ldm", "--pid-file", pidFile)
				if ldm.code != exitOK || !strings.Contains(ldm.stdout.String(), strconv.Itoa(pid)) {
					t.Fatalf("bus ldm: exit %d, stdout %q, stderr:\n%s", ldm.code, ldm.stdout, ldm.stderr)
				}
			} else if err := p.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != exitOK {
				t.Fatalf("serve exited %d after lame duck; stderr:\n%s", code, p.stderr)
			}
			if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
				t.Errorf("pid file left behind after the server stopped: %v", err)
			}
			for _, want := range []string{"entering lame duck mode", "stopped after lame duck mode"} {
				if !strings.Contains(p.stderr.String(), want) {
					t.Errorf("logs lack %q:\n%s", want, p.stderr)
				}
			}
		})
	}
}
