package tests

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// cutAction is what a restore driven by rawRestore does at its cut.
type cutAction int

const (
	cutSend cutAction = iota // send the (maybe changed) chunk and go on
	cutStop                  // send nothing more
	cutEnd                   // send the end of the transfer now
)

// rawRestore drives STREAM.RESTORE as natscli does, of the backup in dir
// under the name as (with subjects of its own), sending the data in
// chunks of 4 KiB; at chunk number cutAt it calls cut, which may change
// the chunk (or send on deliver itself) and says what to do. It returns the final answer's error
// ("restore completed" when there was none), or nil when stopped.
func rawRestore(t *testing.T, nc *nats.Conn, dir, as string, cutAt int, cut func(chunk []byte, deliver string) cutAction) error {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join(dir, "backup.json"))
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(meta, &req); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	_ = json.Unmarshal(req["config"], &cfg)
	cfg["name"] = as
	if subs, ok := cfg["subjects"].([]any); ok && as != "ORDERS" {
		for i := range subs {
			subs[i] = as + "." + fmt.Sprint(i)
		}
	}
	v := jsAPI(t, nc, "$JS.API.STREAM.RESTORE."+as, map[string]any{"config": cfg, "state": req["state"]})
	deliver, _ := v["deliver_subject"].(string)
	if deliver == "" {
		t.Fatalf("restore refused: %v", v)
	}
	data, err := os.ReadFile(backupData(dir))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(data) > 0; i++ {
		chunk := append([]byte(nil), data[:min(4096, len(data))]...)
		data = data[len(chunk):]
		if i == cutAt {
			switch cut(chunk, deliver) {
			case cutStop:
				return nil
			case cutEnd:
				data = nil
				continue
			}
		}
		if _, err := nc.Request(deliver, chunk, 5*time.Second); err != nil {
			return fmt.Errorf("chunk %d: %w", i, err)
		}
	}
	m, err := nc.Request(deliver, nil, 10*time.Second)
	if err != nil {
		return err
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	_ = json.Unmarshal(m.Data, &resp)
	if resp.Error != nil {
		return fmt.Errorf("%s", resp.Error.Description)
	}
	return fmt.Errorf("restore completed")
}

// backupData is a natscli backup's data file: stream.arc.s2 from a
// server of 2.15's version or later, stream.tar.s2 otherwise.
func backupData(dir string) string {
	if p := filepath.Join(dir, "stream.arc.s2"); fileExists(p) {
		return p
	}
	return filepath.Join(dir, "stream.tar.s2")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// randomBelow picks an index in [0, n), logged so a failure can be
// replayed by reading the log.
func randomBelow(t *testing.T, what string, n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: chunk %d of %d", what, v.Int64(), n)
	return int(v.Int64())
}

// noRestoreLeft waits until the abandoned restore of name let go of it:
// no stream of that name, nothing under the store's .restore, no
// directory of that name.
func noRestoreLeft(t *testing.T, ctx context.Context, js jetstream.JetStream, store, name string) {
	t.Helper()
	eventually(t, 15*time.Second, func() bool {
		left := false
		_ = filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
			if err == nil && (strings.Contains(p, ".restore"+string(filepath.Separator)) || filepath.Base(p) == name) {
				left = true
			}
			return nil
		})
		_, err := js.Stream(ctx, name)
		return !left && err != nil
	})
}

// backupForInterrupt fills ORDERS (fillForBackup and 100 incompressible
// messages of 1 KiB, so the snapshot spans many chunks), backs it up with
// natscli and returns the backup and its count of 4 KiB chunks.
func backupForInterrupt(t *testing.T, ctx context.Context, bin, url string, js jetstream.JetStream) (string, int) {
	t.Helper()
	fillForBackup(t, ctx, js)
	for range 100 {
		b := make([]byte, 1024)
		_, _ = rand.Read(b)
		if _, err := js.Publish(ctx, "orders.bulk", b); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "orders")
	if out, err := runCLI(t, ctx, bin, url, "stream", "backup", "ORDERS", dir); err != nil {
		t.Fatalf("nats stream backup: %v\n%s", err, out)
	}
	st, err := os.Stat(backupData(dir))
	if err != nil {
		t.Fatal(err)
	}
	return dir, int(st.Size()+4095) / 4096
}

// A bus process killed (SIGKILL) at a random chunk of a restore, or just
// after the last chunk and the end of the transfer (while it checks and
// builds), starts again with the backed-up stream as it was and nothing
// of the restore (or, killed after the build, the whole restored stream).
func TestJetStreamRestoreKilled(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	store := t.TempDir()
	proc, url := startBusProcess(t, store)
	ctx, cancel := context.WithTimeout(ctxT(t), 120*time.Second)
	defer cancel()
	nc := connect(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	dir, chunks := backupForInterrupt(t, ctx, bin, url, js)
	before := dumpStream(t, ctx, js, "ORDERS")
	at := randomBelow(t, "killed", chunks)
	_ = rawRestore(t, nc, dir, "KILLED", at, func([]byte, string) cutAction {
		_ = proc.Process.Kill()
		_ = proc.Wait()
		return cutStop
	})
	// Killed again while it checks and builds a whole snapshot: after
	// the last chunk and the end of the transfer.
	proc, url = startBusProcess(t, store)
	nc = connect(t, url)
	_ = rawRestore(t, nc, dir, "BUILDING", chunks-1, func(c []byte, deliver string) cutAction {
		if _, err := nc.Request(deliver, c, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		_ = nc.PublishRequest(deliver, nats.NewInbox(), nil) // the end, not waited for
		_ = nc.Flush()
		_ = proc.Process.Kill()
		_ = proc.Wait()
		return cutStop
	})
	s := startBus(t, server.Options{JetStream: true, StoreDir: store})
	js, err = jetstream.New(connect(t, busURL(s)))
	if err != nil {
		t.Fatal(err)
	}
	noRestoreLeft(t, ctx, js, store, "KILLED")
	if _, err := js.Stream(ctx, "BUILDING"); err == nil {
		// The kill came after the build: a whole stream.
		t.Log("killed after the restore was built")
		if got := dumpStream(t, ctx, js, "BUILDING"); len(got.Msgs) != len(before.Msgs) {
			t.Fatalf("BUILDING restored with %d messages, want %d", len(got.Msgs), len(before.Msgs))
		}
	} else {
		t.Log("killed before the restore was built")
		noRestoreLeft(t, ctx, js, store, "BUILDING")
	}
	if after := dumpStream(t, ctx, js, "ORDERS"); !reflect.DeepEqual(before, after) {
		t.Fatal("ORDERS changed after a kill mid-restore")
	}
}

// A restore cut at a random point (the connection closed mid-chunks, a
// damaged chunk, the data ending early, the server stopped) creates
// nothing, frees the name, and leaves the stream that was backed up as
// it was; a restore onto that stream's own name is refused before a
// chunk is taken.
func TestJetStreamRestoreInterrupted(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	store := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store})
	ctx, cancel := context.WithTimeout(ctxT(t), 120*time.Second)
	defer cancel()
	js, err := jetstream.New(connect(t, busURL(s)))
	if err != nil {
		t.Fatal(err)
	}
	dir, chunks := backupForInterrupt(t, ctx, bin, busURL(s), js)
	before := dumpStream(t, ctx, js, "ORDERS")
	intact := func(when string) {
		t.Helper()
		if after := dumpStream(t, ctx, js, "ORDERS"); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: ORDERS changed", when)
		}
	}

	// natscli refuses itself ("already exist"); asked anyway, the server
	// refuses with the reference's error.
	nc := connect(t, busURL(s))
	meta, _ := os.ReadFile(filepath.Join(dir, "backup.json"))
	var req map[string]any
	_ = json.Unmarshal(meta, &req)
	if v := jsAPI(t, nc, "$JS.API.STREAM.RESTORE.ORDERS", req); apiErrCode(v) != 10130 {
		t.Fatalf("restore onto the existing ORDERS: %v", v)
	}
	intact("after a restore onto its name")

	// The connection goes away mid-chunks: the restore is abandoned once
	// it has had no chunk for a while.
	at := randomBelow(t, "connection cut", chunks)
	_ = rawRestore(t, nc, dir, "CUT", at, func([]byte, string) cutAction { nc.Close(); return cutStop })
	noRestoreLeft(t, ctx, js, store, "CUT")
	intact("after a cut connection")

	nc = connect(t, busURL(s))
	at = randomBelow(t, "bad chunk", chunks)
	err = rawRestore(t, nc, dir, "BAD", at, func(c []byte, _ string) cutAction { c[len(c)/2] ^= 0x40; return cutSend })
	if err == nil || !strings.Contains(err.Error(), "restore failed") {
		t.Fatalf("restore with a damaged chunk %d: %v", at, err)
	}
	noRestoreLeft(t, ctx, js, store, "BAD")
	intact("after a damaged chunk")

	// The data stops early and the client says it is done.
	at = randomBelow(t, "early end", chunks)
	err = rawRestore(t, nc, dir, "SHORT", at, func([]byte, string) cutAction { return cutEnd })
	if err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("restore ended at chunk %d: %v", at, err)
	}
	noRestoreLeft(t, ctx, js, store, "SHORT")

	// The server stops mid-restore: started again, it has ORDERS as it
	// was and nothing of the restore.
	at = randomBelow(t, "server stopped", chunks)
	_ = rawRestore(t, nc, dir, "STOPPED", at, func([]byte, string) cutAction { shutdown(t, s); return cutStop })
	s2 := startBus(t, server.Options{JetStream: true, StoreDir: store})
	js, err = jetstream.New(connect(t, busURL(s2)))
	if err != nil {
		t.Fatal(err)
	}
	noRestoreLeft(t, ctx, js, store, "STOPPED")
	intact("after the server stopped mid-restore")
}
