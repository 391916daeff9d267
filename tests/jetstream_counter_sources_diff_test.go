package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// counterSourcesScenario: a counter stream sourcing two counter streams
// sums them: each sourced total counts as the difference from what that
// origin's subject contributed before (Nats-Counter-Sources), whatever
// order the copies arrive in.
func counterSourcesScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 20*time.Second)
	var out []string
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "A", Subjects: []string{"a.>"}, AllowMsgCounter: true},
		{Name: "B", Subjects: []string{"b.>"}, AllowMsgCounter: true},
		{Name: "C", Subjects: []string{"c.>"}, AllowMsgCounter: true, Sources: []*jetstream.StreamSource{
			{Name: "A", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "a.>", Destination: "c.>"}}},
			{Name: "B", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "b.>", Destination: "c.>"}}},
		}},
	} {
		_, outcome := createOutcome(ctx, js, cfg)
		out = append(out, outcome)
	}
	incr := func(subject, by string) {
		m := nats.NewMsg(subject)
		m.Header.Set("Nats-Incr", by)
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatalf("incr %s %s: %v", subject, by, err)
		}
	}
	c, err := js.Stream(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	waitC := func(msgs uint64) {
		var info *jetstream.StreamInfo
		if !waitFor(10*time.Second, func() bool { // sourcing is asynchronous
			var err error
			info, err = c.Info(ctx)
			return err == nil && info.State.Msgs >= msgs
		}) {
			t.Fatalf("C holds %+v, want %d messages", info, msgs)
		}
	}
	n := uint64(0)
	for _, step := range []struct{ subject, by string }{{"a.x", "5"}, {"b.x", "3"}, {"a.x", "2"}, {"b.x", "-10"}, {"a.y", "1"}} {
		incr(step.subject, step.by)
		n++
		waitC(n)
		m, err := c.GetLastMsgForSubject(ctx, "c."+step.subject[2:])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("after %s %s: c.%s = %s, incr %s, sources %s", step.subject, step.by, step.subject[2:],
			m.Data, m.Header.Get("Nats-Incr"), m.Header.Get("Nats-Counter-Sources")))
	}
	return out
}

func TestCounterSourcesMatchReference(t *testing.T) {
	t.Parallel()
	ref := counterSourcesScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := counterSourcesScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	for _, l := range ref {
		t.Log(l)
	}
	sameOutcomes(t, ref, got)
}
