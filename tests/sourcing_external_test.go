package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// Bus reaching an origin through an API prefix: its own domain's, one
// that appears late, and an origin that goes away and comes back.

const hubAPI = "$JS.hub.API"

func startHubAt(t *testing.T, dir string) *server.Server {
	t.Helper()
	s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: dir, JetStream: true, JetStreamDomain: "hub"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// copies creates an external source and mirror of ORIGIN through api.
func copies(t *testing.T, ctx context.Context, js jetstream.JetStream, api string) (src, mir jetstream.Stream) {
	t.Helper()
	ext := &jetstream.ExternalStream{APIPrefix: api}
	src, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SRC", Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: ext}}})
	if err != nil {
		t.Fatal(err)
	}
	mir, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "MIR", Mirror: &jetstream.StreamSource{Name: "ORIGIN", External: ext}})
	if err != nil {
		t.Fatal(err)
	}
	return src, mir
}

func publishN(t *testing.T, ctx context.Context, js jetstream.JetStream, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := js.Publish(ctx, fmt.Sprintf("o.%d", i%5), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

// exactlyOnce checks that a stream holds the payloads 0..n-1, each once,
// and for a mirror at the seq that is its payload + 1.
func exactlyOnce(t *testing.T, ctx context.Context, st jetstream.Stream, n int, mirror bool) {
	t.Helper()
	info := waitStreamMsgs(t, ctx, st, n)
	seen := map[string]bool{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if seen[string(m.Data)] {
			t.Fatalf("%s: %s copied twice", info.Config.Name, m.Data)
		}
		seen[string(m.Data)] = true
		if mirror && string(m.Data) != fmt.Sprint(seq-1) {
			t.Fatalf("%s: seq %d holds %s", info.Config.Name, seq, m.Data)
		}
	}
	for i := range n {
		if !seen[fmt.Sprint(i)] {
			t.Fatalf("%s lacks %d", info.Config.Name, i)
		}
	}
}

// waitNoSourceError polls until a stream's mirror or source shows no
// error and has heard from its origin.
func waitNoSourceError(t *testing.T, ctx context.Context, st jetstream.Stream) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		info, err := st.Info(ctx)
		if err == nil {
			si := info.Mirror
			if si == nil && len(info.Sources) > 0 {
				si = info.Sources[0]
			}
			if si != nil && si.Error == nil && si.Active >= 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still shows a source error", info.Config.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// consumerCount is how many consumers a stream has.
func consumerCount(t *testing.T, ctx context.Context, js jetstream.JetStream, name string) int {
	t.Helper()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Consumers
}

// TestExternalSourceThroughOwnDomain: a copy through this server's own
// domain prefix works (the reference cannot do it), survives a restart
// on the same store without repeating or skipping, and deleting the
// copies removes their consumers on the origin.
func TestExternalSourceThroughOwnDomain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	first := startHubAt(t, dir)
	js, _ := jetstream.New(connect(t, busURL(first)))
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORIGIN", Subjects: []string{"o.>"}}); err != nil {
		t.Fatal(err)
	}
	src, mir := copies(t, ctx, js, hubAPI)
	publishN(t, ctx, js, 0, 50)
	exactlyOnce(t, ctx, src, 50, false)
	exactlyOnce(t, ctx, mir, 50, true)
	js.Conn().Close()
	shutdown(t, first)

	second := startHubAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js2, _ := jetstream.New(connect(t, busURL(second)))
	publishN(t, ctx, js2, 50, 80)
	src2, _ := js2.Stream(ctx, "SRC")
	mir2, _ := js2.Stream(ctx, "MIR")
	exactlyOnce(t, ctx, src2, 80, false)
	exactlyOnce(t, ctx, mir2, 80, true)
	waitNoSourceError(t, ctx, src2)

	for _, name := range []string{"SRC", "MIR"} {
		if err := js2.DeleteStream(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	// The copies' consumers go at once; ones left from before the
	// restart go by their inactive threshold (10s).
	deadline := time.Now().Add(20 * time.Second)
	for consumerCount(t, ctx, js2, "ORIGIN") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("ORIGIN keeps %d consumers", consumerCount(t, ctx, js2, "ORIGIN"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestExternalSourceOriginComesBack: when the origin is deleted the
// copies show it and keep trying; when it is made again (with what it
// held, then more) the mirror goes on after the last seq it stored, and
// the source, which finds the origin's identity changed, starts over and
// copies all of the new origin, as the reference's (sourceidentity.go).
func TestExternalSourceOriginComesBack(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub"})
	js, ctx := scenarioJS(t, busURL(s), 60*time.Second)
	cfg := jetstream.StreamConfig{Name: "ORIGIN", Subjects: []string{"o.>"}}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	src, mir := copies(t, ctx, js, hubAPI)
	publishN(t, ctx, js, 0, 10)
	exactlyOnce(t, ctx, src, 10, false)
	exactlyOnce(t, ctx, mir, 10, true)

	if err := js.DeleteStream(ctx, "ORIGIN"); err != nil {
		t.Fatal(err)
	}
	for _, st := range []jetstream.Stream{src, mir} {
		if e := waitSourceError(t, ctx, st, 20*time.Second); e.ErrorCode != 10059 {
			t.Fatalf("error %v, want stream not found", e)
		}
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	publishN(t, ctx, js, 0, 15)
	exactlyOnce(t, ctx, mir, 15, true)
	// The old origin's 0..9, then the new one's 0..14.
	copiedInOrder(t, ctx, src, 25, func(i int) string {
		if i < 10 {
			return fmt.Sprint(i)
		}
		return fmt.Sprint(i - 10)
	})
	waitNoSourceError(t, ctx, src)
	waitNoSourceError(t, ctx, mir)
}

// waitStreamMsgs waits (a few sourcing back-offs) for st to hold n
// messages and returns its info.
func waitStreamMsgs(t *testing.T, ctx context.Context, st jetstream.Stream, n int) *jetstream.StreamInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := st.Info(ctx)
		if err == nil && info.State.Msgs == uint64(n) {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages, want %d", info.Config.Name, info.State.Msgs, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// copiedInOrder waits for st to hold n messages and checks that the
// i-th holds want(i).
func copiedInOrder(t *testing.T, ctx context.Context, st jetstream.Stream, n int, want func(int) string) {
	t.Helper()
	info := waitStreamMsgs(t, ctx, st, n)
	for i := range n {
		m, err := st.GetMsg(ctx, info.State.FirstSeq+uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data) != want(i) {
			t.Fatalf("%s: message %d holds %q, want %q", info.Config.Name, i, m.Data, want(i))
		}
	}
}

// TestExternalSourceUnansweredPrefix: a prefix nobody answers shows in
// the source's error, and copying starts once something serves it.
func TestExternalSourceUnansweredPrefix(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub"})
	js, ctx := scenarioJS(t, busURL(s), 60*time.Second)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORIGIN", Subjects: []string{"o.>"}}); err != nil {
		t.Fatal(err)
	}
	publishN(t, ctx, js, 0, 20)
	src, mir := copies(t, ctx, js, "$JS.late.API")
	for _, st := range []jetstream.Stream{src, mir} {
		e := waitSourceError(t, ctx, st, 10*time.Second)
		if !strings.Contains(e.Description, "no responders") {
			t.Fatalf("error %v, want no responders", e)
		}
	}
	info, err := src.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(info.Sources[0])
	if !strings.Contains(string(b), `"external":{"api":"$JS.late.API","deliver":""}`) {
		t.Fatalf("source info %s does not echo external", b)
	}
	bridgeAPI(t, busURL(s), "$JS.late.API")
	exactlyOnce(t, ctx, src, 20, false)
	exactlyOnce(t, ctx, mir, 20, true)
	waitNoSourceError(t, ctx, src)
	publishN(t, ctx, js, 20, 30)
	exactlyOnce(t, ctx, src, 30, false)
	exactlyOnce(t, ctx, mir, 30, true)
}
