package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// deliverPrefixScenario: an external source's deliver prefix is checked
// against the subjects of the streams the config sources locally (10022
// when <prefix>.<subject> collides with <subject>), at create and at
// update; a prefix that does not collide, or no local source, passes.
func deliverPrefixScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 30*time.Second)
	var out []string
	add := func(cfg jetstream.StreamConfig) {
		_, o := createOutcome(ctx, js, cfg)
		out = append(out, o)
	}
	add(jetstream.StreamConfig{Name: "WILD", Subjects: []string{"w.>"}})
	add(jetstream.StreamConfig{Name: "LIT", Subjects: []string{"lit.a"}})
	ext := func(deliver string) *jetstream.StreamSource {
		return &jetstream.StreamSource{Name: "FAR", External: &jetstream.ExternalStream{APIPrefix: "$JS.far.API", DeliverPrefix: deliver}}
	}
	local := func(name string) *jetstream.StreamSource { return &jetstream.StreamSource{Name: name} }
	add(jetstream.StreamConfig{Name: "A", Sources: []*jetstream.StreamSource{local("WILD"), ext("w")}})
	add(jetstream.StreamConfig{Name: "B", Sources: []*jetstream.StreamSource{ext("w"), local("WILD")}})
	add(jetstream.StreamConfig{Name: "C", Sources: []*jetstream.StreamSource{local("LIT"), ext("lit")}})
	add(jetstream.StreamConfig{Name: "D", Sources: []*jetstream.StreamSource{local("WILD"), ext("other")}})
	add(jetstream.StreamConfig{Name: "E", Sources: []*jetstream.StreamSource{ext("w")}})
	add(jetstream.StreamConfig{Name: "F", Sources: []*jetstream.StreamSource{local("MISSING"), ext("w")}})
	_, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "E", Sources: []*jetstream.StreamSource{ext("w"), local("WILD")}})
	out = append(out, "update E: "+errText(err))
	return out
}

// errText is err's text, or "ok".
func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func TestDeliverPrefixOverlapMatchesReference(t *testing.T) {
	t.Parallel()
	ref := deliverPrefixScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := deliverPrefixScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
