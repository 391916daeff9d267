//go:build unix

package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var servingAddrRE = regexp.MustCompile(`client=(\S+)`)

// SIGHUP reloads the config file: a new user may log in, a removed one is
// disconnected, the others stay; the log level changes; a change that
// needs a restart is refused with a log line naming the key, and the
// server keeps running as it was.
func TestServeReloadsConfigOnSIGHUP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bus.yaml")
	write := func(users, extra string) {
		t.Helper()
		cfg := "host: 127.0.0.1\nport: 0\nhttp_port: 0\n" + extra + "authorization:\n  users:\n" + users
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	data := "store_dir: " + filepath.Join(dir, "data") + "\n"
	write("    - {user: alice, password: a}\n    - {user: bob, password: b}\n", data)
	p := startBus(t, nil, "serve", "-c", path)
	p.waitServing(t)
	m := servingAddrRE.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("no client address logged:\n%s", p.stderr)
	}
	addr := m[1]
	login := func(user, pass string) (net.Conn, *bufio.Reader, string) {
		t.Helper()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(nc)
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write([]byte(`CONNECT {"verbose":false,"user":"` + user + `","pass":"` + pass + "\"}\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
		line, _ := r.ReadString('\n')
		return nc, r, line
	}
	alice, aliceR, line := login("alice", "a")
	if line != "PONG\r\n" {
		t.Fatalf("alice: %q", line)
	}
	_, bobR, line := login("bob", "b")
	if line != "PONG\r\n" {
		t.Fatalf("bob: %q", line)
	}
	if _, _, line := login("carol", "c"); !strings.Contains(line, "Authorization Violation") {
		t.Fatalf("carol before the reload: %q", line)
	}

	write("    - {user: alice, password: a}\n    - {user: carol, password: c}\n", data+"log_level: debug\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitForLog(t, "msg=\"config reloaded\"")
	if line, _ := bobR.ReadString('\n'); !strings.Contains(line, "Authorization Violation") {
		t.Errorf("bob after the reload: %q", line)
	}
	if _, _, line := login("carol", "c"); line != "PONG\r\n" {
		t.Errorf("carol after the reload: %q", line)
	}
	p.waitForLog(t, "log level changed")

	write("    - {user: alice, password: a}\n    - {user: carol, password: c}\n", "log_level: debug\nmax_payload: 2KB\nstore_dir: "+filepath.Join(dir, "other")+"\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// The refusal names the key, then the reload is logged as failed.
	p.waitForLog(t, "config reload failed")
	if !strings.Contains(p.stderr.String(), "key=store_dir") {
		t.Errorf("the refused reload does not name store_dir:\n%s", p.stderr)
	}
	// alice is still connected: a PING is answered.
	if _, err := alice.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := aliceR.ReadString('\n'); line != "PONG\r\n" {
		t.Errorf("alice after the reloads: %q %v", line, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != exitOK {
		t.Errorf("exit %d; stderr:\n%s", code, p.stderr)
	}
}
