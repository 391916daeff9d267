package server

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedactSecrets(t *testing.T) {
	t.Parallel()
	in := `{"user":"u","pass":"p\"w","auth_token":"t","nkey":"UABC","sig":"s1","name":"pass"}`
	want := `{"user":"u","pass":"[REDACTED]","auth_token":"[REDACTED]","nkey":"[REDACTED]","sig":"[REDACTED]","name":"pass"}`
	if got := redactSecrets(in); got != want {
		t.Errorf("redactSecrets:\n got %s\nwant %s", got, want)
	}
}

// BenchmarkHandlePub measures a connection's reader from parse to queued
// delivery, with tracing off (one branch where the op is handled and one
// where the message is queued) and on (every line formatted; the handler
// drops it).
func BenchmarkHandlePub(b *testing.B) {
	for _, trace := range []bool{false, true} {
		b.Run(fmt.Sprintf("trace=%v", trace), func(b *testing.B) {
			f := newRouteFixture(b, 1, "bench.subject")
			if trace {
				f.srv.tracer.Store(&tracer{})
				f.pub.log, f.subs[0].log = slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler)
			}
			frame := "PUB bench.subject 16\r\n" + strings.Repeat("x", 16) + "\r\n"
			buf := []byte(strings.Repeat(frame, 64))
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if err := f.pub.parser.parse(buf, f.pub); err != nil {
					b.Fatal(err)
				}
				f.pub.wakeWriters()
				f.drainOutbound()
			}
		})
	}
}
