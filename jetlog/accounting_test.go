package jetlog

import "testing"

// accountedSize is the size a message counts for in State.Bytes and
// MaxBytes in a stream of storage (accounting.go).
func accountedSize(storage Storage, subject string, hdr, payload []byte) int {
	framing := fileFraming
	if storage == StorageMemory {
		framing = memoryFraming
	}
	return framing + len(subject) + len(hdr) + len(payload)
}

// TestAccountedBytes: the byte count is the reference's per-message size,
// not the record's, in both storages, and across a reopen.
func TestAccountedBytes(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		dir := t.TempDir()
		cfg := StreamConfig{Name: "S", Storage: k.storage}
		l := openLog(t, dir, cfg, Options{})
		mustAppend(t, l, "s.a", "payload")
		if _, err := l.Append(Msg{Subject: "s.b", Header: []byte("NATS/1.0\r\nA: b\r\n\r\n"), Data: []byte("xy")}, Expect{}); err != nil {
			t.Fatal(err)
		}
		want := uint64(accountedSize(k.storage, "s.a", nil, []byte("payload")) + accountedSize(k.storage, "s.b", []byte("NATS/1.0\r\nA: b\r\n\r\n"), []byte("xy")))
		if got := l.State().Bytes; got != want {
			t.Fatalf("bytes %d, want %d", got, want)
		}
		if k.storage == StorageMemory {
			return
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if got := openLog(t, dir, cfg, Options{}).State().Bytes; got != want {
			t.Fatalf("reopened: bytes %d, want %d", got, want)
		}
	})
}
