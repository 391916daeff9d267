package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tool is a client subprocess (the nats CLI, go) bounded by a context: when
// the context ends, its whole process group gets SIGKILL.
type tool struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has exited and err is set
	err  error
}

// startTool starts argv under ctx with stdout and stderr captured together.
func startTool(ctx context.Context, dir string, env []string, argv ...string) (*tool, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	t := &tool{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		t.err = cmd.Wait()
		close(t.done)
	}()
	return t, nil
}

// wait returns the tool's output once it has exited; a non-zero exit or a
// kill by the context is an error that quotes the end of the output.
func (t *tool) wait() (string, error) {
	<-t.done
	out := t.out.String()
	if t.err != nil {
		return out, fmt.Errorf("%s: %w\n%s", t.cmd.Args[0], t.err, lastLines(out, 8))
	}
	return out, nil
}

// runTool runs argv to completion under ctx and returns its output.
func runTool(ctx context.Context, dir string, env []string, argv ...string) (string, error) {
	t, err := startTool(ctx, dir, env, argv...)
	if err != nil {
		return "", err
	}
	return t.wait()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a
// child's stdout and stderr copiers and a reader.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
