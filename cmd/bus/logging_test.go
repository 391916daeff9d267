package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

// logtime: false leaves the time out, logtime_utc writes it in UTC, and
// the protocol trace's level is named TRACE.
func TestLoggerTimeAndTraceLevel(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	cfg.Trace = true
	var buf bytes.Buffer
	log := newLogger(cfg, &buf)
	log.Log(t.Context(), server.LevelTrace, "<<- [PING]")
	if got := buf.String(); !strings.HasPrefix(got, "time=") || !strings.Contains(got, `level=TRACE msg="<<- [PING]"`) {
		t.Errorf("trace line %q", got)
	}

	cfg.LogTime = false
	buf.Reset()
	newLogger(cfg, &buf).Info("x")
	if got := buf.String(); got != "level=INFO msg=x\n" {
		t.Errorf("logtime false: %q", got)
	}

	cfg.LogTime, cfg.LogTimeUTC = true, true
	buf.Reset()
	newLogger(cfg, &buf).Info("x")
	if got := buf.String(); !regexp.MustCompile(`^time=\S+Z level=INFO`).MatchString(got) {
		t.Errorf("logtime_utc: %q", got)
	}
}

// log_file rotates past logfile_size_limit into time-stamped backups and
// keeps logfile_max_num files, the current one included, as nats-server.
func TestLogFileRotatesAndPurges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "bus.log")
	f, err := openLogFile(name, 100, 3)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 59) + "\n")
	for range 20 { // a rotation every second line
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	backup := regexp.MustCompile(`^bus\.log\.\d{4}\.\d{2}\.\d{2}\.\d{2}\.\d{2}\.\d{2}\.\d{9}$`)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if e.Name() != "bus.log" && !backup.MatchString(e.Name()) {
			t.Errorf("unexpected file %s", e.Name())
		}
	}
	if len(names) != 3 {
		t.Errorf("files %v, want bus.log and 2 backups", names)
	}
	if _, err := f.Write(line); err == nil {
		t.Error("a write after Close succeeded")
	}
}

// A logger derived with With before a swap (each connection's) writes to
// the new handler after it.
func TestSwapHandlerFollowsDerivedLoggers(t *testing.T) {
	t.Parallel()
	var first, second bytes.Buffer
	cfg := conf.Default()
	cfg.LogTime = false
	root := newSwapHandler(newHandler(cfg, &first, slog.LevelInfo))
	conn := slog.New(root).With("cid", 7).WithGroup("g")
	conn.Info("before", "k", 1)
	root.swap(newHandler(cfg, &second, slog.LevelInfo))
	conn.Info("after", "k", 2)
	if got := first.String(); got != "level=INFO msg=before cid=7 g.k=1\n" {
		t.Errorf("first handler: %q", got)
	}
	if got := second.String(); got != "level=INFO msg=after cid=7 g.k=2\n" {
		t.Errorf("second handler: %q", got)
	}
}

// A log_file that cannot be opened is refused naming the key.
func TestLogSinkRefusesUnusableFile(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	cfg.LogFile = filepath.Join(t.TempDir(), "missing", "bus.log")
	if _, err := openLogSink(cfg, os.Stderr, slog.LevelInfo); err == nil || !strings.Contains(err.Error(), "log_file") {
		t.Errorf("openLogSink: %v, want an error naming log_file", err)
	}
}
