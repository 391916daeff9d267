package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitTimeout bounds every wait for the binary; generous, since the
// machine is shared.
const waitTimeout = 20 * time.Second

// output collects what a process writes and wakes waiters on each write.
type output struct {
	mu    sync.Mutex // guards buf
	buf   bytes.Buffer
	wrote chan struct{} // capacity 1: "something was written since you looked"
}

func newOutput() *output { return &output{wrote: make(chan struct{}, 1)} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case o.wrote <- struct{}{}:
	default:
	}
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// process is the bus binary running in the background.
type process struct {
	cmd    *exec.Cmd
	stdout *output
	stderr *output
	exited chan struct{} // closed once the process has exited and code is set
	code   int
}

// startBus runs the binary with args and extra environment variables (and
// no BUS_* variables from the test's own environment). The process is
// killed, if still running, and waited for when the test ends.
func startBus(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{
		cmd:    exec.Command(busBin, args...),
		stdout: newOutput(),
		stderr: newOutput(),
		exited: make(chan struct{}),
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BUS_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start bus %q: %v", args, err)
	}
	go func() {
		err := p.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		default:
			p.code = -1
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// runBus runs the binary to completion and returns its exit code.
func runBus(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := startBus(t, env, args...)
	p.wait(t)
	return p
}

// wait returns the exit code once the process exits.
func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(waitTimeout):
		t.Fatalf("bus %q still running after %v; stderr:\n%s", p.cmd.Args[1:], waitTimeout, p.stderr)
		return 0
	}
}

// waitForLog waits until stderr contains any of texts and reports true, or
// reports false if the process exits without writing one.
func (p *process) waitForLog(t *testing.T, texts ...string) bool {
	t.Helper()
	found := func() bool {
		out := p.stderr.String()
		return slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(out, s) })
	}
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		if found() {
			return true
		}
		select {
		case <-p.stderr.wrote:
		case <-p.exited:
			return found()
		case <-timeout.C:
			t.Fatalf("bus %q did not log %q within %v; stderr:\n%s", p.cmd.Args[1:], texts, waitTimeout, p.stderr)
		}
	}
}

// waitServing waits for the "serving" log line.
func (p *process) waitServing(t *testing.T) {
	t.Helper()
	if p.waitForLog(t, "msg=serving", `"msg":"serving"`) {
		return
	}
	t.Fatalf("bus %q exited with code %d before serving; stderr:\n%s", p.cmd.Args[1:], p.code, p.stderr)
}
