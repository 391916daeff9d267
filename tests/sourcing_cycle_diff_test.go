package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// sourceCycleScenario creates and updates streams whose sources reach a
// stream twice: through a mirror of an origin also sourced (nats.go's
// TestJetStreamStreamMirror/create_sourced_stream_with_a_cycle), through
// a stream that sources it too, and round a real loop, with and without
// a filter that keeps the loop's messages out. Issue 28.
func sourceCycleScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 20*time.Second)
	var out []string
	create := func(cfg jetstream.StreamConfig) {
		_, o := createOutcome(ctx, js, cfg)
		out = append(out, o)
	}
	src := func(name, filter string) *jetstream.StreamSource {
		return &jetstream.StreamSource{Name: name, FilterSubject: filter}
	}
	create(jetstream.StreamConfig{Name: "origin", Subjects: []string{"o.>"}})
	create(jetstream.StreamConfig{Name: "m1", Mirror: src("origin", "")})
	create(jetstream.StreamConfig{Name: "s2", Sources: []*jetstream.StreamSource{src("origin", ""), src("m1", "")}})
	create(jetstream.StreamConfig{Name: "s3", Sources: []*jetstream.StreamSource{src("origin", "o.a"), src("m1", "")}})
	create(jetstream.StreamConfig{Name: "m2", Mirror: src("m1", "")})
	create(jetstream.StreamConfig{Name: "s4", Sources: []*jetstream.StreamSource{src("m1", ""), src("m2", "")}})
	// A diamond of sources: y sources x, z sources both.
	create(jetstream.StreamConfig{Name: "x", Subjects: []string{"x.>"}})
	create(jetstream.StreamConfig{Name: "y", Sources: []*jetstream.StreamSource{src("x", "")}})
	create(jetstream.StreamConfig{Name: "z", Sources: []*jetstream.StreamSource{src("x", ""), src("y", "")}})
	create(jetstream.StreamConfig{Name: "z2", Subjects: []string{"z2.>"}, Sources: []*jetstream.StreamSource{src("x", "x.a"), src("y", "x.b")}})
	// A loop: b sources a before a exists, then a sources b.
	create(jetstream.StreamConfig{Name: "b", Subjects: []string{"b.>"}, Sources: []*jetstream.StreamSource{src("a", "")}})
	create(jetstream.StreamConfig{Name: "a", Subjects: []string{"a.>"}, Sources: []*jetstream.StreamSource{src("b", "")}})
	// The same loop, where d's filter on c takes none of d's own subjects.
	create(jetstream.StreamConfig{Name: "d", Subjects: []string{"d.>"}, Sources: []*jetstream.StreamSource{src("c", "c.only")}})
	create(jetstream.StreamConfig{Name: "c", Subjects: []string{"c.>"}, Sources: []*jetstream.StreamSource{src("d", "")}})
	// A loop made by updates, and a diamond made by an update.
	create(jetstream.StreamConfig{Name: "e", Subjects: []string{"e.>"}})
	create(jetstream.StreamConfig{Name: "f", Subjects: []string{"f.>"}, Sources: []*jetstream.StreamSource{src("e", "")}})
	_, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "e", Subjects: []string{"e.>"}, Sources: []*jetstream.StreamSource{src("f", "")}})
	out = append(out, "update e: "+updateOutcome(err))
	create(jetstream.StreamConfig{Name: "u", Subjects: []string{"u.>"}, Sources: []*jetstream.StreamSource{src("origin", "")}})
	_, err = js.UpdateStream(ctx, jetstream.StreamConfig{Name: "u", Subjects: []string{"u.>"}, Sources: []*jetstream.StreamSource{src("origin", ""), src("m1", "")}})
	out = append(out, "update u: "+updateOutcome(err))
	return out
}

func TestSourceCyclesRefusedAsReference(t *testing.T) {
	t.Parallel()
	ref := sourceCycleScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := sourceCycleScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// updateOutcome is a stream update's outcome: ok, or the error's code
// and text.
func updateOutcome(err error) string {
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &apiErr):
		return fmt.Sprintf("%d %s", apiErr.ErrorCode, apiErr.Description)
	default:
		return err.Error()
	}
}
