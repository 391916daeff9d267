package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// transformScenario: a stream that stores what it captures under a
// transformed subject and republishes it (full and headers only), plus
// the configs the reference refuses.
func transformScenario(t *testing.T, url string) []string {
	t.Helper()
	nc := connect(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	create := func(cfg jetstream.StreamConfig) jetstream.Stream {
		st, outcome := createOutcome(ctx, js, cfg)
		out = append(out, outcome)
		return st
	}
	full, err := nc.SubscribeSync("rp.>")
	if err != nil {
		t.Fatal(err)
	}
	short, err := nc.SubscribeSync("rh.>")
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	st := create(jetstream.StreamConfig{Name: "T", Subjects: []string{"in.>"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "in.>", Destination: "stored.>"},
		RePublish:        &jetstream.RePublish{Source: "stored.>", Destination: "rp.>"}})
	create(jetstream.StreamConfig{Name: "H", Subjects: []string{"h.*"}, RePublish: &jetstream.RePublish{Source: "h.*", Destination: "rh.{{wildcard(1)}}", HeadersOnly: true}})
	create(jetstream.StreamConfig{Name: "HBAD", Subjects: []string{"hb.*"}, RePublish: &jetstream.RePublish{Destination: "rhb.{{wildcard(1)}}"}})
	create(jetstream.StreamConfig{Name: "CYCLE", Subjects: []string{"c.>"}, RePublish: &jetstream.RePublish{Source: "c.>", Destination: "c.x.>"}})
	create(jetstream.StreamConfig{Name: "BADDEST", Subjects: []string{"b.>"}, SubjectTransform: &jetstream.SubjectTransformConfig{Source: "b.*", Destination: "x.{{wildcard(3)}}"}})
	create(jetstream.StreamConfig{Name: "BADSRC", Subjects: []string{"d.>"}, SubjectTransform: &jetstream.SubjectTransformConfig{Source: "d..x", Destination: "y"}})
	for i, subj := range []string{"in.a", "in.b", "in.a"} {
		m := nats.NewMsg(subj)
		m.Data = []byte(fmt.Sprint("v", i))
		if i == 2 {
			m.Header.Set("X-Mine", "kept")
		}
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("stored %s as seq %d", subj, ack.Sequence))
	}
	if _, err := js.Publish(ctx, "h.k", []byte("12345")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		m, err := full.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("republished %s %q stream=%s subject=%s seq=%s last=%s mine=%q ts=%v",
			m.Subject, m.Data, m.Header.Get("Nats-Stream"), m.Header.Get("Nats-Subject"), m.Header.Get("Nats-Sequence"),
			m.Header.Get("Nats-Last-Sequence"), m.Header.Get("X-Mine"), m.Header.Get("Nats-Time-Stamp") != ""))
	}
	m, err := short.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("headers only %s %q size=%s", m.Subject, m.Data, m.Header.Get("Nats-Msg-Size")))
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("stored subjects %v", info.State.Subjects))
	return out
}

func TestSubjectTransformAndRepublishMatchReference(t *testing.T) {
	t.Parallel()
	ref := transformScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := transformScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
