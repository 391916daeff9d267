package tests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// storedSeqs lists a stream's messages as seq:subject[:source header's
// origin seq].
func storedSeqs(t *testing.T, ctx context.Context, s jetstream.Stream) string {
	return describeStored(t, ctx, s, func(m *jetstream.RawStreamMsg) string {
		if h := m.Header.Get("Nats-Stream-Source"); h != "" {
			f := strings.Fields(h)
			return ":from " + f[0] + "/" + f[1]
		}
		return ""
	})
}

// describeStored lists a stream's messages, each as seq:subject:data
// and what more adds, separated by spaces.
func describeStored(t *testing.T, ctx context.Context, s jetstream.Stream, more func(*jetstream.RawStreamMsg) string) string {
	t.Helper()
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:%s:%s", m.Sequence, m.Subject, m.Data)+more(m))
	}
	return strings.Join(out, " ")
}

// waitMsgs polls until a stream holds n messages.
func waitMsgs(t *testing.T, ctx context.Context, s jetstream.Stream, n uint64) {
	t.Helper()
	waitMsgsFor(t, ctx, s, n, 10*time.Second)
}

// waitMsgsFor is waitMsgs with a deadline d away.
func waitMsgsFor(t *testing.T, ctx context.Context, s jetstream.Stream, n uint64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		info, err := s.Info(ctx)
		if err == nil && info.State.Msgs == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages, want %d", info.Config.Name, info.State.Msgs, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sourcingScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 40*time.Second)
	var out []string
	create := func(cfg jetstream.StreamConfig) jetstream.Stream {
		st, outcome := createOutcome(ctx, js, cfg)
		out = append(out, outcome)
		return st
	}
	origin := create(jetstream.StreamConfig{Name: "O", Subjects: []string{"o.>"}})
	other := create(jetstream.StreamConfig{Name: "O2", Subjects: []string{"p.>"}})
	for i, subj := range []string{"o.a", "o.b", "o.a", "o.c", "o.b"} {
		if _, err := js.Publish(ctx, subj, []byte(fmt.Sprint(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(ctx, "p.x", []byte("px")); err != nil {
		t.Fatal(err)
	}
	if err := origin.DeleteMsg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	mirror := create(jetstream.StreamConfig{Name: "M", Mirror: &jetstream.StreamSource{Name: "O"}})
	filtered := create(jetstream.StreamConfig{Name: "MF", Mirror: &jetstream.StreamSource{Name: "O", FilterSubject: "o.a"}})
	sourced := create(jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Sources: []*jetstream.StreamSource{
		{Name: "O", FilterSubject: "o.b"},
		{Name: "O2", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "p.*", Destination: "from-p.{{wildcard(1)}}"}}},
	}})
	create(jetstream.StreamConfig{Name: "BAD1", Subjects: []string{"bad"}, Mirror: &jetstream.StreamSource{Name: "O"}})
	create(jetstream.StreamConfig{Name: "BAD2", Mirror: &jetstream.StreamSource{Name: "O"}, Sources: []*jetstream.StreamSource{{Name: "O2"}}})
	create(jetstream.StreamConfig{Name: "BAD3", Sources: []*jetstream.StreamSource{{Name: "O"}, {Name: "O"}}})
	create(jetstream.StreamConfig{Name: "BAD4", Mirror: &jetstream.StreamSource{Name: "O", FilterSubject: "o.a", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "o.b", Destination: "x"}}}})
	_, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "M", Mirror: &jetstream.StreamSource{Name: "O2"}})
	out = append(out, fmt.Sprintf("update mirror: %v", err))
	_ = other

	waitMsgs(t, ctx, mirror, 4)
	waitMsgs(t, ctx, filtered, 2)
	waitMsgs(t, ctx, sourced, 2)
	if _, err := js.Publish(ctx, "s.own", []byte("own")); err != nil {
		t.Fatal(err)
	}
	for i, subj := range []string{"o.b", "o.a"} {
		if _, err := js.Publish(ctx, subj, []byte(fmt.Sprint("late", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitMsgs(t, ctx, mirror, 6)
	waitMsgs(t, ctx, filtered, 3)
	waitMsgs(t, ctx, sourced, 4)
	// A source's messages get the target's own seqs, in whatever order the
	// sources deliver: compare S without them.
	var s []string
	for _, e := range strings.Fields(storedSeqs(t, ctx, sourced)) {
		s = append(s, e[strings.IndexByte(e, ':')+1:])
	}
	slices.Sort(s)
	out = append(out, "M: "+storedSeqs(t, ctx, mirror), "MF: "+storedSeqs(t, ctx, filtered), "S: "+strings.Join(s, " "))
	info, err := mirror.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("mirror info: name=%s lag=%d", info.Mirror.Name, info.Mirror.Lag))
	sinfo, _ := sourced.Info(ctx)
	out = append(out, fmt.Sprintf("sources info: %d", len(sinfo.Sources)))
	_, err = js.Publish(ctx, "M", []byte("x"))
	out = append(out, fmt.Sprintf("publish to mirror: %v", err != nil))
	return out
}

func TestMirrorsAndSourcesMatchReference(t *testing.T) {
	t.Parallel()
	ref := sourcingScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := sourcingScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// TestSourcingSurvivesRestart: a mirror and a source stopped mid-way go
// on where they were after a restart: nothing copied twice, nothing
// skipped.
func TestSourcingSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	first := startJSAt(t, dir)
	nc := connect(t, busURL(first))
	js, _ := jetstream.New(nc)
	origin, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "O", Subjects: []string{"o.>"}})
	if err != nil {
		t.Fatal(err)
	}
	mirror, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "M", Mirror: &jetstream.StreamSource{Name: "O"}})
	if err != nil {
		t.Fatal(err)
	}
	sourced, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Sources: []*jetstream.StreamSource{{Name: "O"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := js.Publish(ctx, fmt.Sprintf("o.%d", i%5), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitMsgs(t, ctx, mirror, 50)
	waitMsgs(t, ctx, sourced, 50)
	_ = origin
	nc.Close()
	shutdown(t, first)

	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js2, _ := jetstream.New(connect(t, busURL(second)))
	for i := 50; i < 80; i++ {
		if _, err := js2.Publish(ctx, fmt.Sprintf("o.%d", i%5), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	m2, _ := js2.Stream(ctx, "M")
	s2, _ := js2.Stream(ctx, "S")
	waitMsgs(t, ctx, m2, 80)
	waitMsgs(t, ctx, s2, 80)
	for _, st := range []jetstream.Stream{m2, s2} {
		seen := map[string]bool{}
		info, _ := st.Info(ctx)
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			if seen[string(m.Data)] {
				t.Fatalf("%s: %s copied twice", info.Config.Name, m.Data)
			}
			seen[string(m.Data)] = true
		}
		if len(seen) != 80 {
			t.Fatalf("%s has %d distinct messages, want 80", info.Config.Name, len(seen))
		}
	}
}
