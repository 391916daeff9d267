package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/bus-dev/bus/conf"
)

func TestLoggerFormatAndLevel(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	cfg.LogLevel = slog.LevelWarn

	var text bytes.Buffer
	log := newLogger(cfg, &text)
	log.Info("hidden")
	log.Warn("shown", "n", 1)
	if got := text.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "level=WARN msg=shown n=1") {
		t.Errorf("text log at warn:\n%s", got)
	}

	cfg.LogFormat = conf.LogJSON
	var js bytes.Buffer
	newLogger(cfg, &js).Error("boom", "n", 2)
	var rec map[string]any
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil {
		t.Fatalf("json log %q: %v", js.String(), err)
	}
	if rec["msg"] != "boom" || rec["level"] != "ERROR" || rec["n"] != float64(2) {
		t.Errorf("json log record %v", rec)
	}
}
