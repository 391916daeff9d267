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

// waitForFile waits until the file at path contains text and returns
// its content. The log file has no writer to wait on: it is polled.
func waitForFile(t *testing.T, path, text string) string {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), text) {
			return string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no %q within %v:\n%s", path, text, waitTimeout, data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A nats-server config with log_file, trace and logtime: false logs
// there, untimed, with each connection's protocol trace; SIGHUP moves
// the log to another file and turns the trace off, as nats-server
// reloads its logging keys (issue 23).
func TestServeLogFileTraceAndReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "nats.conf")
	first, second := filepath.Join(dir, "bus.log"), filepath.Join(dir, "bus2.log")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("listen: 127.0.0.1:-1\nlogtime: false\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("log_file: " + first + "\ntrace: true\n")
	p := startBus(t, nil, "-c", path)
	log := waitForFile(t, first, "msg=serving")
	m := regexp.MustCompile(`msg=serving client=(\S+)`).FindStringSubmatch(log)
	if m == nil || strings.Contains(log, "time=") {
		t.Fatalf("log file (want untimed lines with the serving line):\n%s", log)
	}
	nc, err := net.Dial("tcp", m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	ping := func() {
		t.Helper()
		if _, err := nc.Write([]byte("CONNECT {\"verbose\":false}\r\nPING\r\n")); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(waitTimeout))
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line == "PONG\r\n" {
				return
			}
		}
	}
	ping()
	waitForFile(t, first, `level=TRACE msg="->> [PONG]"`)
	if log := waitForFile(t, first, `level=TRACE msg="<<- [PING]"`); !strings.Contains(log, `msg="<<- [CONNECT {\"verbose\":false}]"`) {
		t.Errorf("no CONNECT in the trace:\n%s", log)
	}

	write("log_file: " + second + "\n")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, second, `msg="log level changed" from=TRACE to=INFO`)
	ping()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	if log := waitForFile(t, second, "msg=stopped"); strings.Contains(log, "level=TRACE") {
		t.Errorf("traced after the reload turned trace off:\n%s", log)
	}
}
