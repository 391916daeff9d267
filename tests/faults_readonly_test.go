package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A stream whose directory cannot be written (chmod 0500, a read-only
// mount) stays that stream's problem, whether it happens while the server
// runs or before it starts: the other stream serves, writes to this one
// get an error naming the cause (never an ack), it is reported, and once
// the directory is writable again it takes publishes with every
// acknowledged message kept.
//
// chmod does not stop root, and the tests may run as root: the fault is
// then made by the FS seam (faultFS with EROFS), which refuses every
// change under the directory. With a real chmod 0500 on the directory
// alone, files already there stay writable, so publishes may still be
// acknowledged until the stream needs a new file (a segment roll, the
// seq mark): the test asserts only what holds for both.
func TestReadOnlyStreamDirectory(t *testing.T) {
	t.Parallel()
	t.Run("while running", func(t *testing.T) {
		t.Parallel()
		store := t.TempDir()
		ffs := newFaultFS()
		logger, logs := newLogBuffer()
		s := startBus(t, server.Options{JetStream: true, StoreDir: store, StoreFS: ffs, Logger: logger, HTTPPort: -1})
		js := jsClient(t, s)
		ctx := ctxT(t)
		acked := seedStreamsAB(t, js)
		dirA := filepath.Join(store, "jetstream", "A")
		seam := makeReadOnly(t, ffs, dirA)
		refused := 0
		for i := range 5 {
			err := acked.publish(t, "A", 100+i)
			if err == nil {
				continue
			}
			refused++
			if apiCode(err) == 0 {
				t.Fatalf("publish to the read-only stream: %v, want an API error", err)
			}
			t.Logf("publish to the read-only stream: %v", err)
		}
		if seam && refused != 5 {
			t.Fatalf("%d of 5 publishes to the read-only stream refused", refused)
		}
		if seam && len(logs.lines("level=ERROR", "stream=A", "read-only")) == 0 {
			t.Fatalf("the failing writes were not logged")
		}
		for i := range 10 {
			if err := acked.publish(t, "B", 100+i); err != nil {
				t.Fatalf("publish to the writable stream: %v", err)
			}
		}
		if _, err := mustStream(t, js, "A").GetMsg(ctx, 3); err != nil {
			t.Fatalf("read from the read-only stream: %v", err)
		}
		if seam { // the failed write could not be cut off: A is fenced, and /healthz says so
			resp, err := http.Get("http://" + s.HTTPAddr().String() + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			var h struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(body, &h)
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(h.Error, "'$G > A' is not accepting writes") {
				t.Fatalf("/healthz with a fenced stream: %d %s", resp.StatusCode, body)
			}
		}
		// Writable again. A write that could not be cut off (a read-only
		// file system refuses the truncate as well) fenced the stream:
		// the segment's tail is unknown, so it takes writes again only
		// once reopened from its files, which the server does by itself
		// once a probe write in the directory succeeds: no restart.
		restoreWritable(t, ffs, dirA)
		awaitPublish(t, acked, "A", 200)
		resp, err := http.Get("http://" + s.HTTPAddr().String() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz once the stream was reopened: %d", resp.StatusCode)
		}
		if seam && len(logs.lines("stream=A", "reopened")) == 0 {
			t.Fatal("the reopening was not logged")
		}
		acked.check(t, js)
		shutdown(t, s)
		js2 := jsClient(t, startBus(t, server.Options{JetStream: true, StoreDir: store}))
		acked.js = js2
		for i := range 5 {
			if err := acked.publish(t, "A", 300+i); err != nil {
				t.Fatalf("publish after the restart: %v", err)
			}
		}
		acked.check(t, js2)
	})
	t.Run("at start", func(t *testing.T) {
		t.Parallel()
		store := t.TempDir()
		ffs := newFaultFS()
		s := startBus(t, server.Options{JetStream: true, StoreDir: store, StoreFS: ffs})
		js := jsClient(t, s)
		ctx := ctxT(t)
		acked := seedStreamsAB(t, js)
		shutdown(t, s)
		dirA := filepath.Join(store, "jetstream", "A")
		makeReadOnly(t, ffs, dirA)

		logger, logs := newLogBuffer()
		s2 := startBus(t, server.Options{JetStream: true, StoreDir: store, StoreFS: ffs, HTTPPort: -1, Logger: logger})
		js2 := jsClient(t, s2)
		acked.js = js2
		for i := range 5 {
			if err := acked.publish(t, "B", 100+i); err != nil {
				t.Fatalf("publish to the writable stream: %v", err)
			}
		}
		_, err := js2.Stream(ctx, "A")
		if code := apiCode(err); code != 10118 {
			t.Fatalf("info of the read-only stream: %v, want 10118 stream offline", err)
		}
		t.Logf("info of the read-only stream: %v", err)
		if len(logs.lines("level=ERROR", "stream=A")) == 0 {
			t.Fatal("the read-only stream was not logged")
		}
		resp, err := http.Get("http://" + s2.HTTPAddr().String() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/healthz with a read-only stream: %d", resp.StatusCode)
		}
		ack, err := js2.Publish(ctx, "sA.x", []byte("lost?"))
		if err == nil {
			t.Fatalf("a publish to the offline stream was acknowledged: %+v", ack)
		}

		// Writable again: the server opens it by itself (a probe write in
		// its directory succeeds), and after a restart it is served whole.
		restoreWritable(t, ffs, dirA)
		awaitPublish(t, acked, "A", 150)
		if len(logs.lines("stream=A", "writable again")) == 0 {
			t.Fatal("the stream's opening was not logged")
		}
		acked.check(t, js2)
		shutdown(t, s2)
		js3 := jsClient(t, startBus(t, server.Options{JetStream: true, StoreDir: store, StoreFS: ffs}))
		acked.js = js3
		if err := acked.publish(t, "A", 200); err != nil {
			t.Fatalf("publish after the restart: %v", err)
		}
		acked.check(t, js3)
	})
}

// awaitPublish publishes to stream until one is acknowledged: the server
// probes a fenced or offline stream's directory once a second and opens
// the stream again once it is writable. Meanwhile a publish gets the
// fenced stream's error, the offline stream's, or no responders.
func awaitPublish(t *testing.T, acked *ackedStreams, stream string, from int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for i := from; ; i++ {
		err := acked.publish(t, stream, i)
		if err == nil {
			return
		}
		if apiCode(err) == 0 && !errors.Is(err, jetstream.ErrNoStreamResponse) {
			t.Fatalf("publish once writable: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s was not opened again: %v", stream, err)
		}
		time.Sleep(50 * time.Millisecond) // a poll: the probe runs once a second
	}
}

// makeReadOnly makes dir unwritable: chmod 0500 where that stops this
// process, the FS seam otherwise (root). It reports whether the seam was
// used, since chmod on a directory still lets files in it be written.
func makeReadOnly(t *testing.T, ffs *faultFS, dir string) (seam bool) {
	t.Helper()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe")
	f, err := os.Create(probe)
	if err == nil {
		_ = f.Close()
		_ = os.Remove(probe)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Logf("chmod 0500 does not stop this process (root?): using the FS seam")
		ffs.set(dir, syscall.EROFS)
		return true
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) }) // so that TempDir can remove it
	return false
}

// restoreWritable undoes makeReadOnly.
func restoreWritable(t *testing.T, ffs *faultFS, dir string) {
	t.Helper()
	ffs.set(dir, nil)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// seedStreamsAB creates streams A and B (subjects sA.> and sB.>) with 10
// acknowledged messages each, recorded.
func seedStreamsAB(t *testing.T, js jetstream.JetStream) *ackedStreams {
	t.Helper()
	acked := newAckedStreams(js)
	for _, name := range []string{"A", "B"} {
		if _, err := js.CreateStream(ctxT(t), jetstream.StreamConfig{Name: name, Subjects: []string{"s" + name + ".>"}}); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := acked.publish(t, name, i); err != nil {
				t.Fatal(err)
			}
		}
	}
	return acked
}

// ackedStreams records every acknowledged publish per stream, to check
// after the faults that each is stored with its payload.
type ackedStreams struct {
	js    jetstream.JetStream
	acked map[string]map[uint64]string
}

func newAckedStreams(js jetstream.JetStream) *ackedStreams {
	return &ackedStreams{js: js, acked: map[string]map[uint64]string{}}
}

// publish sends message i to stream's subject s<stream>.x and records it
// if it is acknowledged.
func (a *ackedStreams) publish(t *testing.T, stream string, i int) error {
	t.Helper()
	payload := fmt.Sprintf("%s-%d", stream, i)
	ack, err := a.js.Publish(ctxT(t), "s"+stream+".x", []byte(payload))
	if err != nil {
		return err
	}
	if ack.Stream != stream {
		return errors.New("acknowledged by stream " + ack.Stream)
	}
	if a.acked[stream] == nil {
		a.acked[stream] = map[uint64]string{}
	}
	a.acked[stream][ack.Sequence] = payload
	return nil
}

// check fails unless every stream holds exactly its acknowledged messages.
func (a *ackedStreams) check(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	for stream, acked := range a.acked {
		checkAcked(ctxT(t), t, js, stream, acked)
	}
}
