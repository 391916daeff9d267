package tests

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/subjects"
)

// lagConsumers are the filters of TestWildcardLagMatchesReference's
// consumers: one wildcard, two wildcards, a wildcard over every
// subject, and literals mixed with a wildcard.
var lagConsumers = []struct {
	name    string
	filters []string
}{
	{"W1", []string{"lg.a.*"}},
	{"W2", []string{"lg.*.1", "lg.*.2"}},
	{"W3", []string{"lg.>"}},
	{"W4", []string{"lg.c.2", "lg.*.3"}},
}

// Consumers filtered by wildcards (one or several filter subjects, with
// literals among them) report the reference's num_pending in
// CONSUMER.INFO and in every delivery's ack subject while messages are
// stored, delivered, deleted, purged by subject, by seq and with keep,
// dropped by a per-subject limit, and when a consumer's filters are
// updated (issue #30: bus now keeps
// these counts as the stream changes instead of counting afresh).
func TestWildcardLagMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	transcript := map[string]string{}
	for name, url := range map[string]string{"bus": busURL(bus), "reference": "nats://" + refAddr(ref)} {
		transcript[name] = lagScenario(t, url)
		t.Logf("%s: %s", name, transcript[name])
	}
	if transcript["bus"] != transcript["reference"] {
		t.Fatalf("num_pending differs:\n  bus: %s\n  ref: %s", transcript["bus"], transcript["reference"])
	}
}

func lagScenario(t *testing.T, url string) string {
	t.Helper()
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LG", Subjects: []string{"lg.>"}})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(from, n int) {
		for i := from; i < from+n; i++ {
			subj := fmt.Sprintf("lg.%c.%d", "abc"[i%3], 1+i%4)
			if _, err := js.Publish(ctx, subj, []byte(subj)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out strings.Builder
	consumers := map[string]jetstream.Consumer{}
	filtersOf := map[string][]string{}
	// infos records each consumer's num_pending once it equals a count of
	// the stream's messages after its last delivery (the reference
	// counts new messages on a goroutine of its own, so its info may lag
	// a publish for a moment); a count that never gets there is recorded
	// with the brute-force one beside it.
	infos := func(step string) {
		fmt.Fprintf(&out, "%s:", step)
		stored := storedSubjects(t, st)
		for _, lc := range lagConsumers {
			var info *jetstream.ConsumerInfo
			var want uint64
			settled := waitFor(2*time.Second, func() bool {
				var err error
				if info, err = consumers[lc.name].Info(ctx); err != nil {
					t.Fatal(err)
				}
				want = countMatching(stored, filtersOf[lc.name], info.Delivered.Stream+1)
				return info.NumPending == want
			})
			fmt.Fprintf(&out, " %s=%d", lc.name, info.NumPending)
			if !settled {
				fmt.Fprintf(&out, "(brute force %d)", want)
			}
		}
		out.WriteString("; ")
	}
	fetch := func(step string, n int) {
		fmt.Fprintf(&out, "%s:", step)
		for _, lc := range lagConsumers {
			batch, err := consumers[lc.name].Fetch(n, jetstream.FetchMaxWait(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, " %s", lc.name)
			for m := range batch.Messages() {
				meta, err := m.Metadata()
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&out, " %d/%d", meta.Sequence.Stream, meta.NumPending)
				if err := m.DoubleAck(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		out.WriteString("; ")
	}
	create := func(name string, filters []string) {
		cfg := jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy}
		if len(filters) == 1 {
			cfg.FilterSubject = filters[0]
		} else {
			cfg.FilterSubjects = filters
		}
		c, err := st.CreateOrUpdateConsumer(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		consumers[name], filtersOf[name] = c, filters
	}
	publish(0, 60)
	for _, lc := range lagConsumers {
		create(lc.name, lc.filters)
	}
	infos("created")
	fetch("fetch 5", 5)
	infos("after fetch")
	for _, seq := range []uint64{2, 10, 20, 33, 59} {
		if err := st.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	infos("deleted 2 10 20 33 59")
	for _, p := range []struct {
		what string
		opts []jetstream.StreamPurgeOpt
	}{
		{"purge lg.b.> keep 2", []jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject("lg.b.>"), jetstream.WithPurgeKeep(2)}},
		{"purge lg.a.1", []jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject("lg.a.1")}},
	} {
		if err := st.Purge(ctx, p.opts...); err != nil {
			t.Fatal(err)
		}
		infos(p.what)
	}
	publish(60, 12)
	infos("published 12")
	if _, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "LG", Subjects: []string{"lg.>"}, MaxMsgsPerSubject: 3}); err != nil {
		t.Fatal(err)
	}
	infos("max 3 per subject")
	publish(72, 6)
	infos("published 6 more")
	fetch("fetch 4", 4)
	if err := st.Purge(ctx, jetstream.WithPurgeSequence(40)); err != nil {
		t.Fatal(err)
	}
	infos("purge below 40")
	if err := st.Purge(ctx, jetstream.WithPurgeSubject("lg.*.3"), jetstream.WithPurgeSequence(66)); err != nil {
		t.Fatal(err)
	}
	infos("purge lg.*.3 below 66")
	create("W1", []string{"lg.c.*", "lg.a.4"})
	infos("W1 now lg.c.* lg.a.4")
	fetch("fetch 3", 3)
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	infos("purged")
	publish(78, 5)
	infos("published 5")
	fetch("fetch 2", 2)
	infos("end")
	return out.String()
}

// storedSubjects maps each stored message's seq to its subject.
func storedSubjects(t *testing.T, st jetstream.Stream) map[uint64]string {
	t.Helper()
	ctx := ctxT(t)
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]string{}
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[seq] = m.Subject
	}
	return out
}

// countMatching counts the messages of stored at or after from whose
// subject matches any of filters.
func countMatching(stored map[uint64]string, filters []string, from uint64) uint64 {
	var n uint64
	for seq, subj := range stored {
		if seq >= from && slices.ContainsFunc(filters, func(f string) bool { return subjects.Matches(f, subj) }) {
			n++
		}
	}
	return n
}
