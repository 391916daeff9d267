package tests

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// One damaged stream must not take the others down: the server starts,
// serves every other stream, reports the damaged one (stream info,
// /jsz, /healthz) and leaves its files as found until an operator
// deletes it.
func TestDamagedStreamStaysLocal(t *testing.T) {
	t.Parallel()
	for _, damage := range []struct {
		name string
		do   func(t *testing.T, meta string)
		want string // in the reported reason
	}{
		{"flipped byte", func(t *testing.T, meta string) {
			b, err := os.ReadFile(meta)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x40
			writeFile(t, meta, b)
		}, "crc mismatch"},
		{"empty meta", func(t *testing.T, meta string) { writeFile(t, meta, nil) }, ""},
		{"missing meta", func(t *testing.T, meta string) {
			if err := os.Remove(meta); err != nil {
				t.Fatal(err)
			}
		}, "stream.meta is missing"},
	} {
		t.Run(damage.name, func(t *testing.T) {
			t.Parallel()
			store := t.TempDir()
			s := startBus(t, server.Options{JetStream: true, StoreDir: store})
			js := jsClient(t, s)
			ctx := ctxT(t)
			for _, name := range []string{"A", "B"} {
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}}); err != nil {
					t.Fatal(err)
				}
				if _, err := js.Publish(ctx, strings.ToLower(name)+".x", []byte("kept")); err != nil {
					t.Fatal(err)
				}
			}
			shutdown(t, s)
			dirA := filepath.Join(store, "jetstream", "A")
			damage.do(t, filepath.Join(dirA, "stream.meta"))
			before := snapshotDir(t, dirA)

			s2 := startBus(t, server.Options{JetStream: true, StoreDir: store, HTTPPort: -1})
			js2 := jsClient(t, s2)
			// B is served as if nothing happened.
			if _, err := js2.Publish(ctx, "b.y", []byte("more")); err != nil {
				t.Fatalf("publish to the healthy stream: %v", err)
			}
			if m, err := mustStream(t, js2, "B").GetMsg(ctx, 1); err != nil || string(m.Data) != "kept" {
				t.Fatalf("healthy stream lost its message: %v", err)
			}
			// A is reported, with what was found.
			_, err := js2.Stream(ctx, "A")
			var apiErr *jetstream.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10118 || !strings.Contains(apiErr.Description, damage.want) {
				t.Fatalf("info of the damaged stream: %v", err)
			}
			var jsz server.Jsz
			getJSON(t, "http://"+s2.HTTPAddr().String()+"/jsz", &jsz)
			if len(jsz.Damaged) != 1 || jsz.Damaged[0].Name != "A" || jsz.Streams != 1 {
				t.Fatalf("/jsz: streams %d, damaged %+v", jsz.Streams, jsz.Damaged)
			}
			resp, err := http.Get("http://" + s2.HTTPAddr().String() + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("/healthz with a damaged stream: %d", resp.StatusCode)
			}
			// Creating it again would mix old and new files: refused.
			if _, err := js2.CreateStream(ctx, jetstream.StreamConfig{Name: "A", Subjects: []string{"a.>"}}); err == nil {
				t.Fatal("created a stream over a damaged one")
			}
			if after := snapshotDir(t, dirA); !bytes.Equal(before, after) {
				t.Fatal("the damaged stream's files changed")
			}
			// Deleting it is the operator's way out.
			if err := js2.DeleteStream(ctx, "A"); err != nil {
				t.Fatalf("delete the damaged stream: %v", err)
			}
			if _, err := os.Stat(dirA); !os.IsNotExist(err) {
				t.Fatalf("damaged stream's files still there: %v", err)
			}
			if _, err := js2.CreateStream(ctx, jetstream.StreamConfig{Name: "A", Subjects: []string{"a.>"}}); err != nil {
				t.Fatalf("create after deleting the damaged stream: %v", err)
			}
		})
	}
}

func jsClient(t *testing.T, s *server.Server) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(connect(t, busURL(s)))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func mustStream(t *testing.T, js jetstream.JetStream, name string) jetstream.Stream {
	t.Helper()
	st, err := js.Stream(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func writeFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshotDir is every file's name and bytes under dir, in order.
func snapshotDir(t *testing.T, dir string) []byte {
	t.Helper()
	var out []byte
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out = append(append(append(out, p...), 0), b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
