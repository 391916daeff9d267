package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
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

// backupUsers: a restorer who may own streams of orders.> and read them,
// and a reader denied part of what ORDERS holds.
func backupUsers() []server.User {
	return []server.User{
		{Name: "admin", Password: "a"},
		{Name: "restorer", Password: "r", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "$JS.SNAPSHOT.>", "orders.>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "orders.>"}},
		}},
		{Name: "partial", Password: "p", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "$JS.SNAPSHOT.>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "orders.public.>"}},
		}},
	}
}

// takeBackup fills ORDERS on s and backs it up with the CLI into dir.
func takeBackup(t *testing.T, ctx context.Context, bin, url string, js jetstream.JetStream, dir string) {
	t.Helper()
	fillForBackup(t, ctx, js)
	if out, err := runCLI(t, ctx, bin, url, "stream", "backup", "ORDERS", dir); err != nil {
		t.Fatalf("nats stream backup: %v\n%s", err, out)
	}
}

// restoreLeftNothing checks a refused restore created no stream and left
// no files behind.
func restoreLeftNothing(t *testing.T, ctx context.Context, js jetstream.JetStream, storeDir string) {
	t.Helper()
	if _, err := js.Stream(ctx, "ORDERS"); err == nil {
		t.Fatal("a refused restore created the stream")
	}
	filepath.WalkDir(storeDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.Contains(p, ".restore") || strings.Contains(p, "ORDERS")) {
			t.Errorf("a refused restore left %s", p)
		}
		return nil
	})
}

// A damaged or cut-off snapshot is refused, saying what is wrong, and
// nothing is created.
func TestJetStreamRestoreRefusesDamage(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	store := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "orders")
	takeBackup(t, ctx, bin, url, js, dir)
	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "stream.arc.s2")
	if _, err := os.Stat(data); err != nil {
		data = filepath.Join(dir, "stream.tar.s2")
	}
	orig, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"bit flip", func() []byte { b := bytes.Clone(orig); b[len(b)/2] ^= 0x10; return b }(), "damaged"},
		{"truncated", orig[:len(orig)-8], "incomplete"},
		{"empty", nil, "incomplete"},
		{"not a snapshot", []byte("hello, this is not a snapshot"), "restore failed"},
	} {
		if err := os.WriteFile(data, tc.data, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := runCLI(t, ctx, bin, url, "stream", "restore", dir)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Fatalf("%s: restore of a damaged snapshot: %v, want an error naming %q:\n%s", tc.name, err, tc.want, out)
		}
		restoreLeftNothing(t, ctx, js, store)
	}
}

func jsAPI(t *testing.T, nc *nats.Conn, subject string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	m, err := nc.Request(subject, b, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var v map[string]any
	if err := json.Unmarshal(m.Data, &v); err != nil {
		t.Fatalf("%s: %v: %s", subject, err, m.Data)
	}
	return v
}

func apiErrCode(v map[string]any) float64 {
	e, _ := v["error"].(map[string]any)
	c, _ := e["err_code"].(float64)
	return c
}

// A restore over an existing stream gets the reference's error; a
// snapshot by a user who may not read all the stream holds is refused;
// a restored stream and its consumers are the restorer's.
func TestJetStreamBackupOwners(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	store := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store, Authorization: server.Authorization{Users: backupUsers()}})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := connect(t, url, nats.UserInfo("admin", "a"))
	js, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "orders")
	aurl := "nats://admin:a@" + s.Addr().String()
	takeBackup(t, ctx, bin, aurl, js, dir)

	if v := jsAPI(t, admin, "$JS.API.STREAM.RESTORE.ORDERS", map[string]any{"config": map[string]any{"name": "ORDERS", "subjects": []string{"orders.>"}}}); apiErrCode(v) != 10130 {
		t.Fatalf("restore over an existing stream: %v, want err_code 10130", v)
	}
	partial := connect(t, url, nats.UserInfo("partial", "p"))
	if v := jsAPI(t, partial, "$JS.API.STREAM.SNAPSHOT.ORDERS", map[string]any{"deliver_subject": partial.NewRespInbox()}); apiErrCode(v) != 10403 {
		t.Fatalf("snapshot by a user denied orders.eu.paid: %v, want err_code 10403", v)
	}

	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	rurl := "nats://restorer:r@" + s.Addr().String()
	if out, err := runCLI(t, ctx, bin, rurl, "stream", "restore", dir); err != nil {
		t.Fatalf("nats stream restore as restorer: %v\n%s", err, out)
	}
	metas := 0
	filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil || (d.Name() != "stream.meta" && d.Name() != "consumer.meta") {
			return nil
		}
		b, _ := os.ReadFile(p)
		if !bytes.Contains(b, []byte(`"x_bus_owner":"restorer"`)) {
			t.Errorf("%s is not owned by the restorer", p)
		}
		metas++
		return nil
	})
	if metas != 2 {
		t.Fatalf("found %d stream and consumer configs, want 2", metas)
	}
}

// The refusals bus shares with the reference give the same err_code.
func TestJetStreamBackupRefusalsDiff(t *testing.T) {
	t.Parallel()
	ref := startReference(t, true)
	s := startBus(t, server.Options{JetStream: true})
	codes := func(url string) []float64 {
		nc := connect(t, url)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
			t.Fatal(err)
		}
		return []float64{
			apiErrCode(jsAPI(t, nc, "$JS.API.STREAM.RESTORE.ORDERS", map[string]any{"config": map[string]any{"name": "ORDERS", "subjects": []string{"orders.>"}, "storage": "file"}})),
			apiErrCode(jsAPI(t, nc, "$JS.API.STREAM.RESTORE.ORDERS", map[string]any{"config": map[string]any{"name": "OTHER", "subjects": []string{"other.>"}, "storage": "file"}})),
			apiErrCode(jsAPI(t, nc, "$JS.API.STREAM.SNAPSHOT.NONE", map[string]any{"deliver_subject": "x"})),
			apiErrCode(jsAPI(t, nc, "$JS.API.STREAM.SNAPSHOT.ORDERS", map[string]any{"deliver_subject": "x.*"})),
		}
	}
	want, got := codes(ref.ClientURL()), codes(busURL(s))
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("err_codes: reference %v, bus %v", want, got)
	}
	if !reflect.DeepEqual(want, []float64{10130, 10056, 10059, 10015}) {
		t.Fatalf("reference err_codes %v", want)
	}
}
