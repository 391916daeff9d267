package tests

import (
	"strings"
	"testing"

	"github.com/bus-dev/bus/server"
)

// conformanceScenarios are core-protocol behaviours found while securing
// bus (issue 9), run like protocolScenarios against the reference.
// anySid marks a scenario whose deliveries go to a random member of a
// queue group: sids are blanked before comparing.
var conformanceScenarios = []struct {
	name, in string
	anySid   bool
}{
	{"second connect drops subscriptions", quiet + "SUB a 1\r\nSUB b 2\r\n" + quiet + "PUB a 1\r\nx\r\nSUB a 1\r\nPUB a 1\r\ny\r\n", false},
	{"one queue group per name across patterns", quiet + "SUB a.* q 1\r\nSUB a.> q 2\r\nSUB > q 3\r\nSUB a.b r 4\r\nPUB a.b 1\r\nx\r\nPUB a.c 1\r\ny\r\n", true},
	{"second connect keeps working", quiet + quiet + "SUB a 1\r\nPUB a 1\r\nx\r\n", false},
}

func TestConformanceMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{})
	ref := startReference(t, false)
	for _, sc := range conformanceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := exchange(t, refAddr(ref), sc.in)
			got := exchange(t, bus.Addr().String(), sc.in)
			if sc.anySid {
				want, got = blankSids(want), blankSids(got)
			}
			want, got = normalizeFrames(want), normalizeFrames(got)
			if got != want {
				t.Errorf("bus differs from nats-server\ninput: %q\n  bus: %q\n  ref: %q", clip(sc.in), clip(got), clip(want))
			}
		})
	}
}

// blankSids replaces the sid of every MSG line with "_".
func blankSids(s string) string {
	lines := strings.SplitAfter(s, "\r\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "MSG" {
			f[2] = "_"
			lines[i] = strings.Join(f, " ") + "\r\n"
		}
	}
	return strings.Join(lines, "")
}
