package jetlog

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
)

// TestCompressionRoundTrips: compressible payloads are stored smaller,
// others as they are, and every read path (one message, batches, after a
// reopen, after turning compression off) returns what was appended.
func TestCompressionRoundTrips(t *testing.T) {
	dir := t.TempDir()
	cfg := StreamConfig{Name: "Z", Compression: true}
	l, err := Open(dir, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 4096)
	_, _ = rand.Read(random)
	payloads := [][]byte{
		[]byte(strings.Repeat("order shipped; ", 300)), // compressible
		random,          // not
		[]byte("short"), // below compressMin
		{},
	}
	hdr := []byte("NATS/1.0\r\nK: v\r\n\r\n")
	for _, p := range payloads {
		if _, err := l.Append(Msg{Subject: "z", Header: hdr, Data: p}, Expect{}); err != nil {
			t.Fatal(err)
		}
	}
	if s := l.State(); s.Bytes >= uint64(len(payloads[0])+len(random)) {
		t.Fatalf("stored %d bytes: the compressible payload was not compressed", s.Bytes)
	}
	check := func(l *Log, when string) {
		t.Helper()
		for i, p := range payloads {
			m := mustGet(t, l, uint64(i+1))
			if !bytes.Equal(m.Data, p) || !bytes.Equal(m.Header, hdr) {
				t.Fatalf("%s: seq %d read back %d bytes, want %d", when, i+1, len(m.Data), len(p))
			}
		}
		batch, err := l.NextBatch(1, nil, 10)
		if err != nil || len(batch) != len(payloads) {
			t.Fatalf("%s: batch %d, %v", when, len(batch), err)
		}
		for i, m := range batch {
			if !bytes.Equal(m.Data, payloads[i]) {
				t.Fatalf("%s: batch message %d differs", when, i)
			}
		}
	}
	check(l, "open")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, StreamConfig{Name: "Z"}, Options{}) // compression off now: old records still read
	check(l, "reopened without compression")
	if _, err := l.Append(Msg{Subject: "z", Data: payloads[0]}, Expect{}); err != nil {
		t.Fatal(err)
	}
	if m := mustGet(t, l, 5); !bytes.Equal(m.Data, payloads[0]) {
		t.Fatal("uncompressed append after compressed ones differs")
	}
}
