package tests

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// mirrorTimeScenario: a mirror's messages carry the time the origin
// stored them, in a get and in a consumer's delivery metadata, also
// across a gap the origin left (deleted messages) and for messages the
// mirror copies after it caught up. Issue 28, item 3.
// ext, when set, makes it an external mirror (through the origin's API
// under a domain).
func mirrorTimeScenario(t *testing.T, url string, ext *jetstream.ExternalStream) []string {
	js, ctx := scenarioJS(t, url, 2*externalCatchUp)
	var out []string
	_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "O", Subjects: []string{"o.>"}})
	out = append(out, o)
	origin, err := js.Stream(ctx, "O")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := js.Publish(ctx, fmt.Sprintf("o.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := origin.DeleteMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Published before the mirror exists: their times are older than any
	// the mirror could give them itself.
	_, o = createOutcome(ctx, js, jetstream.StreamConfig{Name: "M", Mirror: &jetstream.StreamSource{Name: "O", External: ext}})
	out = append(out, o)
	mirror, err := js.Stream(ctx, "M")
	if err != nil {
		t.Fatal(err)
	}
	waitMsgsFor(t, ctx, mirror, 3, externalCatchUp)
	if _, err := js.Publish(ctx, "o.late", nil); err != nil {
		t.Fatal(err)
	}
	waitMsgsFor(t, ctx, mirror, 4, externalCatchUp)
	for seq := uint64(2); seq <= 5; seq++ {
		om, err1 := origin.GetMsg(ctx, seq)
		mm, err2 := mirror.GetMsg(ctx, seq)
		if err1 != nil || err2 != nil {
			out = append(out, fmt.Sprintf("get %d: %v %v", seq, err1, err2))
			continue
		}
		out = append(out, fmt.Sprintf("get %d: same time %v", seq, om.Time.Equal(mm.Time)))
	}
	cons, err := mirror.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(4)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		om, err := origin.GetMsg(ctx, md.Sequence.Stream)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("delivered %d: same time %v", md.Sequence.Stream, om.Time.Equal(md.Timestamp)))
	}
	oi, err := origin.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mi, err := mirror.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("first time same %v, last time same %v",
		oi.State.FirstTime.Equal(mi.State.FirstTime), oi.State.LastTime.Equal(mi.State.LastTime)))
	return out
}

func TestMirrorKeepsOriginTimesMatchesReference(t *testing.T) {
	t.Parallel()
	ref := mirrorTimeScenario(t, "nats://"+refAddr(startReference(t, true)), nil)
	got := mirrorTimeScenario(t, busURL(startBus(t, server.Options{JetStream: true})), nil)
	sameOutcomes(t, ref, got)
}

// TestExternalMirrorKeepsOriginTimesMatchesReference: the same through
// an external mirror, which learns the times from the deliveries' ack
// subjects (a client bridges farAPI, sourcing_external_diff_test.go).
func TestExternalMirrorKeepsOriginTimesMatchesReference(t *testing.T) {
	t.Parallel()
	refURL := "nats://" + refAddr(startReference(t, true))
	bridgeAPI(t, refURL, farAPI)
	ref := mirrorTimeScenario(t, refURL, external(""))
	busAt := busURL(startBus(t, server.Options{JetStream: true}))
	bridgeAPI(t, busAt, farAPI)
	sameOutcomes(t, ref, mirrorTimeScenario(t, busAt, external("")))
}
