package jetstream

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sealed spool holds nothing readable, reads back what was written,
// and refuses a flipped byte or a cut-off frame.
func TestRestoreSpoolSealed(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "snapshot")
		sp, err := newSpool(nil, path, sealed)
		if err != nil {
			t.Fatal(err)
		}
		w, err := sp.create()
		if err != nil {
			t.Fatal(err)
		}
		chunks := []string{"first chunk secret-subject.x", strings.Repeat("payload ", 1000), "last"}
		for _, c := range chunks {
			if _, err := w.Write([]byte(c)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(raw, []byte("secret-subject")); got == sealed {
			t.Fatalf("sealed=%v: the spool shows its content: %v", sealed, got)
		}
		readAll := func() (string, error) {
			r, err := sp.open()
			if err != nil {
				return "", err
			}
			defer r.Close()
			b, err := io.ReadAll(r)
			return string(b), err
		}
		if got, err := readAll(); err != nil || got != strings.Join(chunks, "") {
			t.Fatalf("sealed=%v: read back %d bytes, %v", sealed, len(got), err)
		}
		if !sealed {
			continue
		}
		for name, damage := range map[string][]byte{
			"flipped": func() []byte { d := bytes.Clone(raw); d[10] ^= 1; return d }(),
			"cut":     raw[:len(raw)-3],
		} {
			if err := os.WriteFile(path, damage, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := readAll(); err == nil {
				t.Errorf("%s spool read without error", name)
			}
		}
	}
}
