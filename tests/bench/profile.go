package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// profiler is a `perf record -g` attached to one server run, so a slow
// scenario can be read with `perf report -i FILE` afterwards. Go binaries
// keep frame pointers, so the call graphs name Go functions.
type profiler struct {
	t    *tool
	path string
}

// startPerf attaches perf to pid, writing dir/<scenario>-<flavor>-<run>.data.
func startPerf(ctx context.Context, dir, scenario, flavor string, run, pid int) (*profiler, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.data", slug(scenario), flavor, run))
	t, err := startTool(ctx, "", nil, "perf", "record", "-F", "999", "-g", "-p", strconv.Itoa(pid), "-o", path)
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	p := &profiler{t: t, path: path}
	// perf writes its header once it has attached; wait for that so the
	// recording covers the whole run.
	for {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return p, nil
		}
		select {
		case <-t.done:
			_, err := t.wait()
			return nil, fmt.Errorf("perf exited before recording: %w", err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// stop ends the recording the way perf expects (SIGINT) and waits for it
// to write the file.
func (p *profiler) stop() error {
	_ = p.t.cmd.Process.Signal(os.Interrupt)
	if _, err := p.t.wait(); err != nil && !strings.Contains(err.Error(), "interrupt") {
		return err
	}
	return nil
}

// slug turns a scenario name into a file name: "pub→sub 1 KiB" → "pub-sub-1-kib".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
