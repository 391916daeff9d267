package header

import (
	"bytes"
	"slices"
	"testing"
)

func TestValue(t *testing.T) {
	cases := []struct{ hdr, key, want, exact string }{
		{"NATS/1.0\r\nNats-Msg-Id: abc\r\n\r\n", "Nats-Msg-Id", "abc", "abc"},
		{"NATS/1.0\r\nA: 1\r\nnats-msg-id:  x y \r\n\r\n", "Nats-Msg-Id", "x y", ""},
		{"NATS/1.0\r\nA: 1\r\n\r\n", "Nats-Msg-Id", "", ""},
		{"NATS/1.0\r\nK:\r\nK: later\r\n\r\n", "K", "", ""}, // the first one counts
		{"NATS/1.0\r\nno colon\r\nK: v\r\n\r\n", "K", "v", "v"},
		{"NATS/1.0\r\n\r\nK: after the block\r\n", "K", "", ""},
		{"NATS/1.0 408 Request Timeout\r\nK : v:w\r\n\r\n", "K", "v:w", "v:w"},
		{"NATS/1.0", "K", "", ""},
		{"garbage\r\nNats-Msg-Id", "Nats-Msg-Id", "", ""},
		{"", "K", "", ""},
	}
	for _, tc := range cases {
		if got := string(Value([]byte(tc.hdr), tc.key)); got != tc.want {
			t.Errorf("Value(%q, %q) = %q, want %q", tc.hdr, tc.key, got, tc.want)
		}
		if got := string(ExactValue([]byte(tc.hdr), tc.key)); got != tc.exact {
			t.Errorf("ExactValue(%q, %q) = %q, want %q", tc.hdr, tc.key, got, tc.exact)
		}
	}
}

func TestLookup(t *testing.T) {
	hdr := []byte("NATS/1.0\r\nEmpty:\r\nFull: v\r\n\r\n")
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{{"empty", "", true}, {"FULL", "v", true}, {"Missing", "", false}} {
		if v, ok := Lookup(hdr, tc.key); string(v) != tc.want || ok != tc.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tc.key, v, ok, tc.want, tc.ok)
		}
	}
}

func TestLines(t *testing.T) {
	hdr := []byte("NATS/1.0 100 Idle Heartbeat\r\nA: 1\r\nbroken\r\n B :2\r\n\r\n")
	var names, values []string
	for name, line := range Lines(hdr) {
		if name == nil {
			names = append(names, "<nil>")
		} else {
			names = append(names, string(name))
		}
		values = append(values, string(LineValue(line)))
	}
	if want := []string{"A", "<nil>", "B", "<nil>"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if want := []string{"1", "", "2", ""}; !slices.Equal(values, want) {
		t.Errorf("values %q, want %q", values, want)
	}
	for range Lines([]byte("no status line")) {
		t.Error("a block without a status line has no lines")
	}
}

// The storage and the publish path read headers per message: no
// allocation.
func TestValueAllocatesNothing(t *testing.T) {
	hdr := []byte("NATS/1.0\r\nNats-Expected-Stream: S\r\nNats-Msg-Id: abc\r\n\r\n")
	if n := testing.AllocsPerRun(100, func() {
		Value(hdr, "nats-msg-id")
		ExactValue(hdr, "Nats-Msg-Id")
	}); n != 0 {
		t.Errorf("%v allocations per read, want 0", n)
	}
}

func FuzzHeader(f *testing.F) {
	f.Add([]byte("NATS/1.0\r\nNats-Msg-Id: abc\r\n\r\n"), "nats-msg-id")
	f.Add([]byte("NATS/1.0 503\r\n\r\n"), "")
	f.Fuzz(func(t *testing.T, hdr []byte, key string) {
		v := Value(hdr, key)
		if v != nil && !bytes.Contains(hdr, v) {
			t.Fatalf("Value %q is not part of %q", v, hdr)
		}
		if e := ExactValue(hdr, key); e != nil && !bytes.Contains(hdr, e) {
			t.Fatalf("ExactValue %q is not part of %q", e, hdr)
		}
		for _, line := range Lines(hdr) {
			LineValue(line)
		}
	})
}
