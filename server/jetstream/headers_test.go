package jetstream

import (
	"bytes"
	"testing"
)

func TestWithoutHeaders(t *testing.T) {
	t.Parallel()
	dropExpected := func(k []byte) bool { return bytes.HasPrefix(bytes.ToLower(k), []byte("nats-expected-")) }
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"NATS/1.0\r\nNats-Expected-Stream: X\r\n\r\n", ""},
		{"NATS/1.0\r\nA: 1\r\nnats-expected-last-sequence: 4\r\nB: 2\r\n\r\n", "NATS/1.0\r\nA: 1\r\nB: 2\r\n\r\n"},
		{"NATS/1.0 503\r\nNats-Expected-Stream: X\r\n\r\n", "NATS/1.0 503\r\n\r\n"},
	} {
		if got := string(withoutHeaders([]byte(c.in), dropExpected)); got != c.want {
			t.Errorf("withoutHeaders(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
