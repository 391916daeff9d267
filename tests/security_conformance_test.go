package tests

import (
	"testing"

	"github.com/bus-dev/bus/server"
)

// conformanceScenarios are core-protocol behaviours found while securing
// bus (issue 9), run like protocolScenarios against the reference.
var conformanceScenarios = []struct{ name, in string }{
	{"second connect drops subscriptions", quiet + "SUB a 1\r\nSUB b 2\r\n" + quiet + "PUB a 1\r\nx\r\nSUB a 1\r\nPUB a 1\r\ny\r\n"},
	{"second connect keeps working", quiet + quiet + "SUB a 1\r\nPUB a 1\r\nx\r\n"},
}

func TestConformanceMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{})
	ref := startReference(t, false)
	for _, sc := range conformanceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := normalizeFrames(exchange(t, refAddr(ref), sc.in))
			got := normalizeFrames(exchange(t, bus.Addr().String(), sc.in))
			if got != want {
				t.Errorf("bus differs from nats-server\ninput: %q\n  bus: %q\n  ref: %q", clip(sc.in), clip(got), clip(want))
			}
		})
	}
}
