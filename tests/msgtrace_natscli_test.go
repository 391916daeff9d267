package tests

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// `nats trace` (trace-only by default) works against bus as against the
// reference: it prints the server, the subscriber and the stream it
// would have reached, and nothing is delivered or stored; with --deliver
// the message is delivered and stored (issue 23).
func TestNATSTraceAsReference(t *testing.T) {
	t.Parallel()
	cli := natsCLI(t)
	b := startBus(t, server.Options{JetStream: true})
	r := startReference(t, true)
	idRE := regexp.MustCompile(`N[A-Z0-9]{55}`)
	outs := map[string][]string{}
	for _, side := range []struct{ name, url string }{{"bus", busURL(b)}, {"reference", r.ClientURL()}} {
		subs := connect(t, side.url, nats.Name("subber"))
		plain, err := subs.SubscribeSync("orders.new")
		if err != nil {
			t.Fatal(err)
		}
		flushAll(t, subs)
		ctx, stream := ordersStream(t, subs)
		for _, args := range [][]string{{"trace", "orders.new", "hello"}, {"trace", "--deliver", "orders.new", "hello"}} {
			cmd := exec.Command(cli, append([]string{"--server", side.url, "--connection-name", "tracer"}, args...)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: nats %q: %v\n%s", side.name, args, err, out)
			}
			text := idRE.ReplaceAllString(string(out), "<server>")
			text = regexp.MustCompile(`cid:\d+`).ReplaceAllString(text, "cid:N")
			text = regexp.MustCompile(`version:"[^"]*"`).ReplaceAllString(text, `version:"V"`) // bus reports the protocol version it speaks
			// The order of a message's egresses is not part of the protocol.
			lines := strings.Split(text, "\n")
			slices.Sort(lines)
			outs[side.name] = append(outs[side.name], strings.Join(lines, "\n"))
		}
		if _, err := plain.NextMsg(2 * time.Second); err != nil {
			t.Errorf("%s: nats trace --deliver did not deliver: %v", side.name, err)
		}
		if m, err := plain.NextMsg(200 * time.Millisecond); err == nil {
			t.Errorf("%s: the trace-only probe was delivered: %q", side.name, m.Header)
		}
		if info, err := stream.Info(ctx); err != nil || info.State.Msgs != 1 {
			t.Errorf("%s: stream holds %v messages (%v), want 1: the trace-only probe is never stored", side.name, info.State.Msgs, err)
		}
	}
	for i := range outs["reference"] {
		if at(outs["bus"], i) != outs["reference"][i] {
			t.Errorf("nats trace output %d differs\n  bus:\n%s\n  ref:\n%s", i, at(outs["bus"], i), outs["reference"][i])
		}
		for _, want := range []string{"subber", "ORDERS"} {
			if !strings.Contains(at(outs["bus"], i), want) {
				t.Errorf("nats trace output %d on bus does not name %s:\n%s", i, want, at(outs["bus"], i))
			}
		}
	}
}
