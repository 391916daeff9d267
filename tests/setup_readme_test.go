package tests

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's "Set up" and "Try it with telnet", in order: `go install
// ./cmd/bus` (into a GOBIN of the test's), `bus version`, `bus serve`
// (on free ports: BUS_PORT and BUS_HTTP_PORT beat the defaults), then
// the telnet session typed line by line, each server line compared with
// the README's. Not walked: the `@latest` install (the module is not on a
// proxy this test may reach) and the whole-suite `go test` line, which
// is what CI runs anyway.
func TestReadmeSetUpAndTelnetWalk(t *testing.T) {
	t.Parallel()
	setup := readmeSection(t, "## Set up")
	for _, want := range []string{"    go install ./cmd/bus\n", "    bus serve "} {
		if !strings.Contains(setup, want) {
			t.Fatalf("Set up no longer has %q", want)
		}
	}
	gobin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, "go", "install", "./cmd/bus")
	install.Dir = ".."
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/bus: %v\n%s", err, out)
	}
	bus := filepath.Join(gobin, "bus")

	version := strings.Split(runShell(t, ctx, "", bus, "version"), "\n")
	if len(version) < 2 || !strings.HasPrefix(version[0], "bus ") || !strings.HasPrefix(version[1], "speaks nats-server ") {
		t.Fatalf("bus version does not say which bus it is and what it speaks:\n%s", strings.Join(version, "\n"))
	}
	speaks := strings.Fields(version[1])[2]

	p := startDeployProc(t, []string{bus, "serve", "--store-dir", t.TempDir()}, "BUS_HOST=127.0.0.1")
	client, _ := p.serving(t)
	session := telnetSession(t, readmeSection(t, "## Try it with telnet"))
	if session.addr != "127.0.0.1:4222" {
		t.Fatalf("the telnet session dials %s, not bus serve's default", session.addr)
	}
	nc, err := net.Dial("tcp", client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	rc := &rawConn{t: t, nc: nc, r: bufio.NewReader(nc)}
	for _, l := range session.lines {
		if l.typed {
			rc.send(l.text + "\r\n")
			continue
		}
		got := strings.TrimRight(rc.line(), " \r\n") // INFO ends "} ", as nats-server's
		if !elidedMatch(l.text, got) {
			t.Fatalf("the README shows %q, bus sent %q", l.text, got)
		}
		if strings.HasPrefix(got, "INFO ") && !strings.Contains(got, `"version":"`+speaks+`"`) {
			t.Errorf("INFO %s does not carry the version bus version says it speaks (%s)", got, speaks)
		}
	}
}

// telnetLine is one line of the README's telnet session: typed by the
// reader (marked `>`), or sent by the server.
type telnetLine struct {
	typed bool
	text  string
}

type telnetSessionText struct {
	addr  string // what `$ telnet host port` dials
	lines []telnetLine
}

// telnetSession is the indented block that starts with `$ telnet`, up to
// the first line that is not part of it; an empty line in it is one the
// server sends.
func telnetSession(t *testing.T, section string) telnetSessionText {
	t.Helper()
	start := regexp.MustCompile(`(?m)^    \$ telnet (\S+) (\d+)\n`).FindStringSubmatchIndex(section)
	if start == nil {
		t.Fatal("Try it with telnet has no `$ telnet host port` line")
	}
	s := telnetSessionText{addr: section[start[2]:start[3]] + ":" + section[start[4]:start[5]]}
	for _, line := range strings.Split(section[start[1]:], "\n") {
		if line != "" && !strings.HasPrefix(line, "    ") {
			break
		}
		text := strings.TrimPrefix(line, "    ")
		switch {
		case text == ">":
			s.lines = append(s.lines, telnetLine{typed: true})
		case strings.HasPrefix(text, "> "):
			s.lines = append(s.lines, telnetLine{typed: true, text: text[2:]})
		default:
			s.lines = append(s.lines, telnetLine{text: text})
		}
	}
	for len(s.lines) > 0 && !s.lines[len(s.lines)-1].typed && s.lines[len(s.lines)-1].text == "" {
		s.lines = s.lines[:len(s.lines)-1]
	}
	return s
}

// elidedMatch compares a server line with the README's, where "…"
// stands for text the README leaves out (ids, the rest of INFO).
func elidedMatch(shown, got string) bool {
	parts := strings.Split(shown, "…")
	last := parts[len(parts)-1]
	if len(parts) == 1 {
		return got == shown
	}
	if !strings.HasPrefix(got, parts[0]) || !strings.HasSuffix(got, last) || len(got) < len(parts[0])+len(last) {
		return false
	}
	got = got[len(parts[0]) : len(got)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(got, p)
		if i < 0 {
			return false
		}
		got = got[i+len(p):]
	}
	return true
}
