package jetstream

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A long recovery reports streams done of total, the stream being
// opened and the message rate; a quick one logs nothing extra.
func TestLoadProgress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	p := newLoadProgress(slog.New(slog.NewTextHandler(&buf, nil)), clock, 3)
	p.opening("ORDERS")
	p.streamDone(20_000)
	p.opening("EVENTS")
	now = now.Add(10 * time.Second)
	p.report()
	line := buf.String()
	for _, want := range []string{"recovering streams", "streams_done=1", "streams_total=3", "opening=EVENTS", "messages=20000", "msgs_per_sec=2000", "elapsed=10s"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line lacks %q: %s", want, line)
		}
	}
	p.streamDone(30_000)
	p.streamDone(0)
	now = now.Add(15 * time.Second)
	buf.Reset()
	p.finish()
	for _, want := range []string{"streams recovered", "streams=3", "messages=50000", "msgs_per_sec=2000", "elapsed=25s"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q: %s", want, buf.String())
		}
	}

	buf.Reset()
	quick := newLoadProgress(slog.New(slog.NewTextHandler(&buf, nil)), clock, 1)
	quick.streamDone(5)
	quick.finish()
	if buf.Len() != 0 {
		t.Errorf("a quick recovery logged %q", buf.String())
	}
}
