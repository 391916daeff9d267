package tests

import (
	"bytes"
	"context"
	"fmt"
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

// What an encrypted store must never show on disk.
const (
	encSubject  = "enc.secret-subject-4b7d"
	encPayload  = "payload-never-on-disk-0c9e"
	encHeader   = "header-value-hidden-77aa"
	encKVKey    = "kvkey-hidden-3f10"
	encKVValue  = "kvvalue-hidden-e2d4"
	encObjName  = "object-name-hidden-19ab"
	encObjBytes = "object-bytes-hidden-5c6f"
)

// startEncrypted runs a bus with JetStream on store, encrypted with enc.
func startEncrypted(t *testing.T, store string, enc server.JetStreamEncryption) (*server.Server, *logBuffer) {
	t.Helper()
	logger, logs := newLogBuffer()
	return startBus(t, server.Options{JetStream: true, StoreDir: store, JetStreamEncryption: enc, Logger: logger}), logs
}

// fillEncrypted makes a stream with messages and a consumer that acked
// some, a KV bucket and an object store.
func fillEncrypted(t *testing.T, ctx context.Context, js jetstream.JetStream) {
	t.Helper()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ENC", Subjects: []string{"enc.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		m := nats.NewMsg(encSubject)
		m.Header.Set("X-Secret", encHeader)
		m.Data = []byte(fmt.Sprintf("%s-%d", encPayload, i))
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "READER", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(10, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range b.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "CFG"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, encKVKey, []byte(encKVValue)); err != nil {
		t.Fatal(err)
	}
	obj, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "FILES"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.PutBytes(ctx, encObjName, []byte(strings.Repeat(encObjBytes, 100))); err != nil {
		t.Fatal(err)
	}
}

// checkEncryptedContent reads back what fillEncrypted wrote.
func checkEncryptedContent(t *testing.T, ctx context.Context, js jetstream.JetStream) {
	t.Helper()
	st, err := js.Stream(ctx, "ENC")
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{1, 50} {
		m, err := st.GetMsg(ctx, seq)
		if err != nil || m.Subject != encSubject || string(m.Data) != fmt.Sprintf("%s-%d", encPayload, seq-1) || m.Header.Get("X-Secret") != encHeader {
			t.Fatalf("seq %d after restart: %+v, %v", seq, m, err)
		}
	}
	c, err := st.Consumer(ctx, "READER")
	if err != nil {
		t.Fatal(err)
	}
	if ci, err := c.Info(ctx); err != nil || ci.AckFloor.Stream != 10 {
		t.Fatalf("consumer after restart: %+v, %v", ci, err)
	}
	kv, err := js.KeyValue(ctx, "CFG")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, encKVKey); err != nil || string(e.Value()) != encKVValue {
		t.Fatalf("kv after restart: %v", err)
	}
	obj, err := js.ObjectStore(ctx, "FILES")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := obj.GetBytes(ctx, encObjName); err != nil || string(data) != strings.Repeat(encObjBytes, 100) {
		t.Fatalf("object after restart: %v", err)
	}
}

// plaintextOnDisk lists the files under dir holding any of words.
func plaintextOnDisk(t *testing.T, dir string, words ...string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range words {
			if bytes.Contains(data, []byte(w)) {
				found = append(found, fmt.Sprintf("%s holds %q", p, w))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

var encWords = []string{encSubject, encPayload, encHeader, encKVKey, encKVValue, encObjName, encObjBytes, "enc.", "READER"}

// With jetstream.key set, nothing a client stored (subjects, payloads,
// headers, consumer names, KV keys and values, object names and bytes)
// is readable in the store directory, and everything reads back after a
// restart, with either cipher.
func TestJetStreamEncryptionAtRest(t *testing.T) {
	for _, cipher := range []string{"chachapoly", "aes"} {
		t.Run(cipher, func(t *testing.T) {
			t.Parallel()
			store := t.TempDir()
			enc := server.JetStreamEncryption{Cipher: cipher, Key: "operator-key-1"}
			ctx := ctxT(t)
			s, logs := startEncrypted(t, store, enc)
			if len(logs.lines("jetstream enabled", "encryption="+cipher)) == 0 {
				t.Error("the start line does not name the cipher")
			}
			fillEncrypted(t, ctx, jsClient(t, s))
			// Live files are encrypted as written, before any clean close.
			if found := plaintextOnDisk(t, store, encWords...); len(found) > 0 {
				t.Fatalf("plaintext in a running encrypted store:\n%s", strings.Join(found, "\n"))
			}
			shutdown(t, s)
			if found := plaintextOnDisk(t, store, encWords...); len(found) > 0 {
				t.Fatalf("plaintext in an encrypted store:\n%s", strings.Join(found, "\n"))
			}
			s2, _ := startEncrypted(t, store, enc)
			checkEncryptedContent(t, ctx, jsClient(t, s2))
		})
	}
}

// A wrong or missing key leaves the streams it does not open offline,
// naming them in the log, touches none of their files, and serves the
// rest; the right key afterwards finds everything.
func TestJetStreamEncryptionWrongKeyRefused(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	enc := server.JetStreamEncryption{Key: "operator-key-1"}
	ctx := ctxT(t)
	s, _ := startEncrypted(t, store, enc)
	fillEncrypted(t, ctx, jsClient(t, s))
	shutdown(t, s)
	before := storeSnapshot(t, store)

	for _, tc := range []struct {
		name string
		enc  server.JetStreamEncryption
		want string
	}{
		{"wrong", server.JetStreamEncryption{Key: "operator-key-2"}, "encrypted with another key"},
		{"missing", server.JetStreamEncryption{}, "no encryption key is configured"},
	} {
		s, logs := startEncrypted(t, store, tc.enc)
		js := jsClient(t, s)
		for _, name := range []string{"ENC", "KV_CFG", "OBJ_FILES"} {
			if _, err := js.Stream(ctx, name); apiCode(err) != 10118 {
				t.Fatalf("%s key: stream %s = %v, want offline (10118)", tc.name, name, err)
			}
			if len(logs.lines("level=ERROR", "stream="+name, tc.want)) == 0 {
				t.Fatalf("%s key: no error naming stream %s and saying %q:\n%s", tc.name, name, tc.want, strings.Join(logs.lines(), "\n"))
			}
		}
		if len(logs.lines("level=ERROR", "streams not loaded for their encryption", "ENC,KV_CFG,", "OBJ_FILES")) == 0 {
			t.Errorf("%s key: no summary line naming the refused streams", tc.name)
		}
		// The server still serves new streams (encrypted or not, as configured).
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "NEW_" + tc.name, Subjects: []string{"new." + tc.name}}); err != nil {
			t.Fatalf("%s key: create another stream: %v", tc.name, err)
		}
		shutdown(t, s)
		after := storeSnapshot(t, store)
		for p, data := range before {
			if !bytes.Equal(after[p], data) {
				t.Errorf("%s key: the refused start changed %s", tc.name, p)
			}
		}
	}
	s3, _ := startEncrypted(t, store, enc)
	checkEncryptedContent(t, ctx, jsClient(t, s3))
}

// storeSnapshot reads every file of the streams fillEncrypted made (the
// store's LOCK aside).
func storeSnapshot(t *testing.T, store string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range []string{"ENC", "KV_CFG", "OBJ_FILES"} {
		dir := filepath.Join(store, "jetstream", name)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "LOCK" {
				return err
			}
			data, err := os.ReadFile(p)
			out[p] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Rotation: with the old key as prev_encryption_key every stream opens
// and its key file is rewrapped, after which the new key alone opens
// them and the old one no longer does.
func TestJetStreamEncryptionKeyRotation(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	ctx := ctxT(t)
	s, _ := startEncrypted(t, store, server.JetStreamEncryption{Key: "old-key"})
	fillEncrypted(t, ctx, jsClient(t, s))
	shutdown(t, s)

	s, logs := startEncrypted(t, store, server.JetStreamEncryption{Key: "new-key", PrevKey: "old-key"})
	if len(logs.lines("jetstream enabled", "rotating")) == 0 {
		t.Error("the start line does not say a rotation is on")
	}
	checkEncryptedContent(t, ctx, jsClient(t, s))
	shutdown(t, s)

	s, _ = startEncrypted(t, store, server.JetStreamEncryption{Key: "new-key"})
	checkEncryptedContent(t, ctx, jsClient(t, s))
	shutdown(t, s)

	s, _ = startEncrypted(t, store, server.JetStreamEncryption{Key: "old-key"})
	if _, err := jsClient(t, s).Stream(ctx, "ENC"); apiCode(err) != 10118 {
		t.Fatalf("the old key after rotation: %v, want offline", err)
	}
}

// Turning encryption on for a store with plaintext streams leaves those
// offline with what to do, and encrypts new ones; turning it off again
// serves the plaintext streams as before.
func TestJetStreamEncryptionOnPlaintextStore(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	ctx := ctxT(t)
	s := startBus(t, server.Options{JetStream: true, StoreDir: store})
	js := jsClient(t, s)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "plain.x", []byte("before")); err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)

	s, logs := startEncrypted(t, store, server.JetStreamEncryption{Key: "k"})
	js = jsClient(t, s)
	if _, err := js.Stream(ctx, "PLAIN"); apiCode(err) != 10118 {
		t.Fatalf("plaintext stream under a key: %v, want offline", err)
	}
	if len(logs.lines("level=ERROR", "stream=PLAIN", "stored unencrypted", "restore")) == 0 {
		t.Fatalf("no error naming PLAIN and what to do:\n%s", strings.Join(logs.lines(), "\n"))
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SEALED", Subjects: []string{"sealed.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "sealed.x", []byte(encPayload)); err != nil {
		t.Fatal(err)
	}
	if found := plaintextOnDisk(t, filepath.Join(store, "jetstream", "SEALED"), encPayload, "sealed.x"); len(found) > 0 {
		t.Fatalf("a new stream under a key is not encrypted: %v", found)
	}
	shutdown(t, s)

	s = startBus(t, server.Options{JetStream: true, StoreDir: store})
	if m, err := mustStream(t, jsClient(t, s), "PLAIN").GetMsg(ctx, 1); err != nil || string(m.Data) != "before" {
		t.Fatalf("the plaintext stream without the key: %v", err)
	}
}

// STREAM.SNAPSHOT of an encrypted stream is plaintext, as the
// reference's is (the backup is the operator's to protect), and a
// restore into an encrypted server is encrypted on disk.
func TestJetStreamEncryptionBackupRestoreCLI(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s, _ := startEncrypted(t, store, server.JetStreamEncryption{Key: "k"})
	before, after := backupRoundTrip(t, busURL(s))
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("restored differs:\nbefore %+v\nafter  %+v", before, after)
	}
	if found := plaintextOnDisk(t, store, "orders.eu.paid", "order ###"); len(found) > 0 {
		t.Fatalf("a restore into an encrypted server wrote plaintext:\n%s", strings.Join(found, "\n"))
	}
}

// server.New refuses encryption options that would not do what they say.
func TestJetStreamEncryptionOptionsChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		enc  server.JetStreamEncryption
		want string
	}{
		{server.JetStreamEncryption{Cipher: "aes"}, "without a key"},
		{server.JetStreamEncryption{Cipher: "des", Key: "k"}, "unknown cipher"},
		{server.JetStreamEncryption{PrevKey: "k"}, "without a key"},
		{server.JetStreamEncryption{Key: "k", PrevKey: "k"}, "equals key"},
	} {
		_, err := server.New(server.Options{JetStream: true, StoreDir: t.TempDir(), JetStreamEncryption: tc.enc})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: New = %v, want an error saying %q", tc.enc, err, tc.want)
		}
	}
}
