package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// External mirrors and sources (issue 15, scale-out): a stream copies
// another through the JetStream API at a prefix, as it would a stream
// across a leaf link. The reference cannot reach its own domain's prefix
// from inside (its domain mapping applies to clients' publishes only, so
// its sourcing request to $JS.hub.API goes unanswered); here a client
// plays the link instead: it serves $JS.far.API by passing requests on
// to $JS.API, on both servers alike. Bus reaching its own domain is
// tested in sourcing_external_test.go.

const farAPI = "$JS.far.API"

// bridgeAPI serves the API prefix from as a link to another domain
// would: each request goes on to $JS.API with its reply and headers. It
// returns what it passed on, each request as "subject body".
func bridgeAPI(t *testing.T, url, from string) func() []string {
	t.Helper()
	nc := connect(t, url)
	var mu sync.Mutex
	var seen []string
	_, err := nc.Subscribe(from+".>", func(m *nats.Msg) {
		out := &nats.Msg{Subject: "$JS.API" + strings.TrimPrefix(m.Subject, from), Reply: m.Reply, Header: m.Header, Data: m.Data}
		mu.Lock()
		seen = append(seen, m.Subject+" "+string(m.Data))
		mu.Unlock()
		if err := nc.PublishMsg(out); err != nil {
			t.Errorf("bridge: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// createRequests describes the consumer create requests a bridge passed
// on, without the random token of their deliver subjects.
func createRequests(t *testing.T, seen []string) string {
	t.Helper()
	var out []string
	first := map[string]bool{} // a copy's later requests depend on timing
	for _, r := range seen {
		subject, body, _ := strings.Cut(r, " ")
		if !strings.Contains(subject, ".CONSUMER.CREATE.") {
			continue
		}
		var req map[string]any
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		cfg, _ := req["config"].(map[string]any)
		if d, ok := cfg["deliver_subject"].(string); ok {
			cfg["deliver_subject"] = d[:strings.LastIndexByte(d, '.')] + ".*"
		}
		b, _ := json.Marshal(req)
		if md, _ := cfg["metadata"].(map[string]any); md != nil {
			key := fmt.Sprint(md["_nats.src.stream"], md["_nats.mirror.stream"])
			if first[key] {
				continue
			}
			first[key] = true
		}
		out = append(out, subject+" "+string(b))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// startReferenceDomain runs the reference with JetStream in a domain.
func startReferenceDomain(t *testing.T, domain string) *natsserver.Server {
	t.Helper()
	return startReferenceWith(t, func(o *natsserver.Options) {
		o.JetStream, o.JetStreamDomain, o.StoreDir = true, domain, t.TempDir()
	})
}

func external(deliver string) *jetstream.ExternalStream {
	return &jetstream.ExternalStream{APIPrefix: farAPI, DeliverPrefix: deliver}
}

// copiedMsgs lists a stream's messages with everything a copy keeps:
// seq, subject, data, the Nats-Stream-Source header whole and the other
// headers by name.
func copiedMsgs(t *testing.T, ctx context.Context, s jetstream.Stream) string {
	t.Helper()
	return describeStored(t, ctx, s, func(m *jetstream.RawStreamMsg) string {
		var names []string
		for k := range m.Header {
			names = append(names, k)
		}
		slices.Sort(names)
		e := ""
		for _, k := range names {
			if k == "Nats-Stream-Source" {
				// The origin names its stream's identity in the create
				// response, and sourcing adds it as a sixth field: its
				// length here, its value depends on the creation time.
				f := strings.Fields(m.Header.Get(k))
				e += "[" + strings.Join(f[:min(len(f), 5)], " ")
				if len(f) > 5 {
					e += fmt.Sprintf(" <identity of %d>", len(f[5]))
				}
				e += "]"
			} else {
				e += "[" + k + "=" + m.Header.Get(k) + "]"
			}
		}
		return e
	})
}

// sourceState describes a mirror's or source's info without what
// depends on timing.
func sourceState(si *jetstream.StreamSourceInfo) string {
	if si == nil {
		return "none"
	}
	e := fmt.Sprintf("name=%s lag=%d active=%v filter=%q transforms=%v", si.Name, si.Lag, si.Active >= 0, si.FilterSubject, si.SubjectTransforms)
	if x := si.External; x != nil {
		e += fmt.Sprintf(" external=%s,%q", x.APIPrefix, x.DeliverPrefix)
	}
	if si.Error != nil {
		e += fmt.Sprintf(" error=%d %s", si.Error.ErrorCode, si.Error.Description)
	}
	return e
}

// waitSourceError polls a stream's info until its mirror or first
// source shows an error, and returns it.
func waitSourceError(t *testing.T, ctx context.Context, s jetstream.Stream, d time.Duration) *jetstream.APIError {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		info, err := s.Info(ctx)
		if err == nil {
			si := info.Mirror
			if si == nil && len(info.Sources) > 0 {
				si = info.Sources[0]
			}
			if si != nil && si.Error != nil {
				return si.Error
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s shows no source error after %v", info.Config.Name, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func externalScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 2*time.Minute)
	requests := bridgeAPI(t, url, farAPI)
	var out []string
	create := func(cfg jetstream.StreamConfig) jetstream.Stream {
		st, outcome := createOutcome(ctx, js, cfg)
		out = append(out, outcome)
		return st
	}
	origin := create(jetstream.StreamConfig{Name: "ORIGIN", Subjects: []string{"o.>"}})
	pub := func(subj, data string, hdr nats.Header) {
		t.Helper()
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: subj, Data: []byte(data), Header: hdr}); err != nil {
			t.Fatal(err)
		}
	}
	pub("o.a", "1", nats.Header{"X-Id": {"one"}})
	pub("o.b", "2", nil)
	pub("o.a", "3", nats.Header{"Nats-Expected-Stream": {"ORIGIN"}, "X-Id": {"three"}})
	pub("o.c", "4", nil)
	pub("o.b", "5", nil)
	if err := origin.DeleteMsg(ctx, 2); err != nil {
		t.Fatal(err)
	}

	// Validation, as the reference.
	create(jetstream.StreamConfig{Name: "BAD1", Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: &jetstream.ExternalStream{APIPrefix: "$JS.API"}}}})
	create(jetstream.StreamConfig{Name: "BAD2", Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: &jetstream.ExternalStream{APIPrefix: "$JS.*.API"}}}})
	create(jetstream.StreamConfig{Name: "BAD3", Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: &jetstream.ExternalStream{APIPrefix: farAPI, DeliverPrefix: "dl.>"}}}})
	create(jetstream.StreamConfig{Name: "BAD4", Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: external("")}, {Name: "ORIGIN", External: external("")}}})
	create(jetstream.StreamConfig{Name: "BAD5", Subjects: []string{"m"}, Mirror: &jetstream.StreamSource{Name: "ORIGIN", External: external("")}})

	src := create(jetstream.StreamConfig{Name: "SRC", Subjects: []string{"s.>"}, Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: external("")}}})
	srcT := create(jetstream.StreamConfig{Name: "SRCT", Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: external("dlv"),
		SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "o.b", Destination: "from.b"}}}}})
	mir := create(jetstream.StreamConfig{Name: "MIR", Mirror: &jetstream.StreamSource{Name: "ORIGIN", External: external("")}})
	mirF := create(jetstream.StreamConfig{Name: "MIRF", Mirror: &jetstream.StreamSource{Name: "ORIGIN", FilterSubject: "o.a", External: external("")}})
	mirT := create(jetstream.StreamConfig{Name: "MIRT", Mirror: &jetstream.StreamSource{Name: "ORIGIN", External: external("dlv"),
		SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "o.*", Destination: "m.{{wildcard(1)}}"}}}})
	missing := create(jetstream.StreamConfig{Name: "MISSING", Mirror: &jetstream.StreamSource{Name: "NOPE", External: external("")}})

	waitMsgsFor(t, ctx, src, 4, externalCatchUp)
	waitMsgsFor(t, ctx, srcT, 1, externalCatchUp)
	waitMsgsFor(t, ctx, mir, 4, externalCatchUp)
	waitMsgsFor(t, ctx, mirF, 2, externalCatchUp)
	waitMsgsFor(t, ctx, mirT, 4, externalCatchUp)
	pub("s.own", "own", nil)
	pub("o.b", "6", nil)
	pub("o.a", "7", nats.Header{"X-Id": {"seven"}})
	waitMsgsFor(t, ctx, src, 7, externalCatchUp)
	waitMsgsFor(t, ctx, srcT, 2, externalCatchUp)
	waitMsgsFor(t, ctx, mir, 6, externalCatchUp)
	waitMsgsFor(t, ctx, mirF, 3, externalCatchUp)
	waitMsgsFor(t, ctx, mirT, 6, externalCatchUp)
	e := waitSourceError(t, ctx, missing, 20*time.Second)
	out = append(out, fmt.Sprintf("missing origin: %d %d %s", e.Code, e.ErrorCode, e.Description))
	out = append(out, "create requests:\n"+createRequests(t, requests()))

	// A source's messages get the target's own seqs: compare without.
	noSeqs := func(s string) string {
		var es []string
		for _, e := range strings.Fields(s) {
			es = append(es, e[strings.IndexByte(e, ':')+1:])
		}
		slices.Sort(es)
		return strings.Join(es, " ")
	}
	out = append(out,
		"SRC: "+noSeqs(copiedMsgs(t, ctx, src)),
		"SRCT: "+noSeqs(copiedMsgs(t, ctx, srcT)),
		"MIR: "+copiedMsgs(t, ctx, mir),
		"MIRF: "+copiedMsgs(t, ctx, mirF),
		"MIRT: "+copiedMsgs(t, ctx, mirT))
	for _, st := range []jetstream.Stream{src, srcT, mir, mirF, mirT} {
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s info: first=%d last=%d msgs=%d mirror: %s", info.Config.Name, info.State.FirstSeq,
			info.State.LastSeq, info.State.Msgs, sourceState(info.Mirror))
		for _, si := range info.Sources {
			line += " source: " + sourceState(si)
		}
		if m := info.Config.Mirror; m != nil {
			line += fmt.Sprintf(" config external=%+v", *m.External)
		}
		out = append(out, line)
	}
	_, err := js.Publish(ctx, "MIR", []byte("x"))
	out = append(out, fmt.Sprintf("publish to mirror: %v", err != nil))
	return out
}

// externalCatchUp bounds the wait for external copies: a first create
// request the origin misses is retried after the reference's back-off
// (2 s plus 10 s per failure), and a loaded CI machine misses some.
const externalCatchUp = 45 * time.Second

func TestExternalSourcesMatchReference(t *testing.T) {
	t.Parallel()
	ref := externalScenario(t, "nats://"+startReferenceDomain(t, "hub").Addr().String())
	got := externalScenario(t, busURL(startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub"})))
	sameOutcomes(t, ref, got)
}

// externalRecreateScenario: the origin of an external source is deleted
// and made again; the source finds its identity changed (API level 5)
// and copies the new origin from its start, beside what it copied of
// the old one.
func externalRecreateScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 2*time.Minute)
	bridgeAPI(t, url, farAPI)
	var out []string
	originCfg := jetstream.StreamConfig{Name: "ORIGIN", Subjects: []string{"o.>"}}
	_, o := createOutcome(ctx, js, originCfg)
	out = append(out, o)
	src, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "SRC", Sources: []*jetstream.StreamSource{{Name: "ORIGIN", External: external("")}}})
	out = append(out, o)
	publish := func(data ...string) {
		for _, d := range data {
			if _, err := js.Publish(ctx, "o.a", []byte(d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitMsgs := func(n uint64) {
		deadline := time.Now().Add(time.Minute)
		for {
			info, err := src.Info(ctx)
			if err == nil && info.State.Msgs >= n || time.Now().After(deadline) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	publish("old1", "old2", "old3")
	waitMsgs(3)
	if err := js.DeleteStream(ctx, "ORIGIN"); err != nil {
		t.Fatal(err)
	}
	_, o = createOutcome(ctx, js, originCfg)
	out = append(out, "again: "+o)
	publish("new1", "new2")
	waitMsgs(5)
	out = append(out, "source: "+copiedMsgs(t, ctx, src))
	return out
}

func TestExternalSourceRecreatedOriginMatchesReference(t *testing.T) {
	t.Parallel()
	ref := externalRecreateScenario(t, "nats://"+startReferenceDomain(t, "hub").Addr().String())
	got := externalRecreateScenario(t, busURL(startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub"})))
	sameOutcomes(t, ref, got)
}

// externalRetireScenario: a stream update removes two external sources,
// one of a limits origin and one of a work queue. The work queue's
// sourcing consumer (durable, acked by flow control) is shown and is
// deleted at once; the limits origin's (direct, under a suffixed name)
// is not shown, as the reference's direct consumers are not, and is left
// to its inactive threshold.
func externalRetireScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 2*time.Minute)
	bridgeAPI(t, url, farAPI)
	var out []string
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "LIMO", Subjects: []string{"lim.>"}},
		{Name: "WQO", Subjects: []string{"wq.>"}, Retention: jetstream.WorkQueuePolicy},
	} {
		_, o := createOutcome(ctx, js, cfg)
		out = append(out, o)
	}
	for _, subj := range []string{"lim.a", "wq.a"} {
		if _, err := js.Publish(ctx, subj, []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	srcCfg := jetstream.StreamConfig{Name: "SRC", Subjects: []string{"own.>"}, Sources: []*jetstream.StreamSource{
		{Name: "LIMO", External: external("")}, {Name: "WQO", External: external("")}}}
	src, o := createOutcome(ctx, js, srcCfg)
	out = append(out, o)
	count := func(name string) int { return consumerCount(t, ctx, js, name) }
	poll := func(done func() bool) { waitFor(20*time.Second, done) }
	poll(func() bool {
		info, err := src.Info(ctx)
		return err == nil && info.State.Msgs == 2 && count("WQO") == 1
	})
	out = append(out, fmt.Sprintf("copying: LIMO %d consumers, WQO %d", count("LIMO"), count("WQO")))
	srcCfg.Sources = nil
	if _, err := js.UpdateStream(ctx, srcCfg); err != nil {
		t.Fatal(err)
	}
	poll(func() bool { return count("WQO") == 0 })
	out = append(out, fmt.Sprintf("after the update: LIMO %d consumers, WQO %d", count("LIMO"), count("WQO")))
	return out
}

func TestExternalSourceRemovedMatchesReference(t *testing.T) {
	t.Parallel()
	ref := externalRetireScenario(t, "nats://"+startReferenceDomain(t, "hub").Addr().String())
	got := externalRetireScenario(t, busURL(startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub"})))
	sameOutcomes(t, ref, got)
}
