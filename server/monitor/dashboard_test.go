package monitor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bus-dev/bus/subjects"
)

func TestDashboardParseHeaders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		{"", "[]"},
		{"NATS/1.0\r\n\r\n", "[]"},
		{"NATS/1.0 503\r\n\r\n", "[]"},
		{"NATS/1.0\r\nBus-Dlq-Reason: terminated: bad\r\nA:b\r\n\r\n", "[{Bus-Dlq-Reason terminated: bad} {A b}]"},
		{"NATS/1.0\r\nno colon\r\n: empty key\r\nK:  v \r\n\r\n", "[{K v}]"},
		{"garbage", "[]"},
	} {
		if got := fmt.Sprint(parseHeaders([]byte(tc.in))); got != tc.want {
			t.Errorf("parseHeaders(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if !isDeadLetter([]byte("NATS/1.0\r\nbus-dlq-subject: jobs.1\r\n\r\n")) || isDeadLetter([]byte("NATS/1.0\r\nBus-Dlq-Reason: x\r\n\r\n")) {
		t.Error("isDeadLetter")
	}
}

func TestDashboardPayload(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		data      string
		limit     int
		encoding  string
		text      string
		truncated bool
	}{
		{"text", "hello\n\tworld", 100, "text", "hello\n\tworld", false},
		{"empty", "", 100, "text", "", false},
		{"cut on a character", "aé", 2, "text", "a", true},
		{"cut at the limit", "abcdef", 3, "text", "abc", true},
		{"invalid utf-8", "a\xffb", 100, "hex", "00000000  61 ff 62", false},
		{"control bytes", "a\x00b", 100, "hex", "00000000  61 00 62", false},
		{"binary cut", "\x00\x01\x02\x03", 2, "hex", "00000000  00 01", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPayload([]byte(tc.data), tc.limit)
			if p.Encoding != tc.encoding || !strings.HasPrefix(p.Text, tc.text) || p.Truncated != tc.truncated || p.Size != len(tc.data) {
				t.Fatalf("got %+v, want %s %q truncated %v", p, tc.encoding, tc.text, tc.truncated)
			}
			if tc.encoding == "text" && p.Text != tc.text {
				t.Fatalf("text %q, want %q", p.Text, tc.text)
			}
		})
	}
}

func TestDashboardStreamNames(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"ORDERS": true, "kv_ORDERS-1": true, "ünï": true,
		"": false, "a.b": false, "*": false, ">": false, "a b": false, "a/b": false, `a\b`: false, "a\tb": false,
		strings.Repeat("x", 256): false,
	} {
		if subjects.ValidName(name) != ok {
			t.Errorf("subjects.ValidName(%q) = %v", name, !ok)
		}
	}
}
