package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

var serverIDRE = regexp.MustCompile(`^N[A-Z0-9]{55}$`)

// traceShape is a trace event without what differs by nature (ids,
// times, the server's identity): its request and its events, each
// without ts and cid, sorted (the order of one message's subscriptions
// is not part of the protocol).
func traceShape(t *testing.T, data []byte) string {
	t.Helper()
	var ev struct {
		Server  map[string]any   `json:"server"`
		Request map[string]any   `json:"request"`
		Hops    int              `json:"hops"`
		Events  []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("trace event %s: %v", data, err)
	}
	for _, k := range []string{"name", "id", "ver", "time", "seq", "host", "jetstream"} {
		if _, ok := ev.Server[k]; !ok {
			t.Errorf("trace event's server has no %q: %s", k, data)
		}
	}
	var events []string
	for _, e := range ev.Events {
		if _, ok := e["ts"]; !ok {
			t.Errorf("trace event without ts: %v", e)
		}
		delete(e, "ts")
		delete(e, "cid")
		if name, _ := e["name"].(string); serverIDRE.MatchString(name) {
			e["name"] = "<a server id>" // a leaf's, named by the hub
		}
		b, _ := json.Marshal(e)
		events = append(events, string(b))
	}
	slices.Sort(events)
	req, _ := json.Marshal(ev.Request)
	return fmt.Sprintf("request %s hops %d\n  %s", req, ev.Hops, strings.Join(events, "\n  "))
}

// A traced publish (Nats-Trace-Dest) yields the reference's trace event:
// ingress, an egress per core subscriber and queue group, the stream's
// "js" event; with Nats-Trace-Only the message reaches no subscriber and
// no stream stores it (issue 23).
func TestMsgTraceMatchesReference(t *testing.T) {
	t.Parallel()
	b := startBus(t, server.Options{JetStream: true})
	r := startReference(t, true)
	shapes := map[string][]string{}
	for _, side := range []struct{ name, url string }{{"bus", busURL(b)}, {"reference", r.ClientURL()}} {
		pub := connect(t, side.url, nats.Name("pub"))
		subs := connect(t, side.url, nats.Name("subber"))
		plain, err := subs.SubscribeSync("orders.new")
		if err != nil {
			t.Fatal(err)
		}
		queue, err := subs.QueueSubscribeSync("orders.*", "workers")
		if err != nil {
			t.Fatal(err)
		}
		flushAll(t, subs)
		ctx, stream := ordersStream(t, pub)
		dest, err := pub.SubscribeSync("trace.dest")
		if err != nil {
			t.Fatal(err)
		}
		flushAll(t, pub)
		for _, only := range []string{"", "true", "on"} {
			publishTraced(t, pub, only)
			ev, err := dest.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("%s: no trace event (only %q): %v", side.name, only, err)
			}
			shapes[side.name] = append(shapes[side.name], traceShape(t, ev.Data))
		}
		// One delivery each, of the first (traced, not trace-only) publish.
		for _, s := range []*nats.Subscription{plain, queue} {
			if _, err := s.NextMsg(2 * time.Second); err != nil {
				t.Errorf("%s: the traced publish did not reach %s: %v", side.name, s.Subject, err)
			}
			flushAll(t, pub, subs)
			if m, err := s.NextMsg(100 * time.Millisecond); err == nil {
				t.Errorf("%s: a trace-only publish reached %s: %q", side.name, s.Subject, m.Header)
			}
		}
		info, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs != 1 {
			t.Errorf("%s: the stream holds %d messages, want 1 (trace-only publishes are never stored)", side.name, info.State.Msgs)
		}
		stored, err := stream.GetMsg(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := stored.Header.Get("Nats-Trace-Dest"); got != "trace disabled" {
			t.Errorf("%s: stored Nats-Trace-Dest %q, want \"trace disabled\"", side.name, got)
		}
	}
	sameTraceShapes(t, shapes)
}

// publishTraced publishes "hello" on orders.new traced to trace.dest,
// with Nats-Trace-Only: only unless it is "".
func publishTraced(t *testing.T, nc *nats.Conn, only string) {
	t.Helper()
	m := nats.NewMsg("orders.new")
	m.Data = []byte("hello")
	m.Header.Set("Nats-Trace-Dest", "trace.dest")
	if only != "" {
		m.Header.Set("Nats-Trace-Only", only)
	}
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
}

// ordersStream creates the stream ORDERS on orders.> through nc, and a
// context for the test's JetStream calls.
func ordersStream(t *testing.T, nc *nats.Conn) (context.Context, jetstream.Stream) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, stream
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<none>"
}

// A traced publish that crosses a leaf link gets an egress of kind leaf
// with hop 1, and the hub, which sees Nats-Trace-Hop, traces its own part
// to the same destination; a trace-only one still crosses, and the hub
// delivers it to no one. The same as from a reference leaf (issue 23).
func TestMsgTraceAcrossLeafMatchesReference(t *testing.T) {
	t.Parallel()
	sameTraceShapes(t, leafTraceShapes(t, false))
}

// A traced publish from the hub that reaches a subscriber on the leaf:
// the leaf traces its part (ingress of kind leaf named for the hub, an
// egress to its subscriber) as a nats-server leaf does, and a trace-only
// one it delivers to no one (issue 23).
func TestMsgTraceFromHubMatchesReference(t *testing.T) {
	t.Parallel()
	sameTraceShapes(t, leafTraceShapes(t, true))
}

// leafTraceShapes runs, with bus and then a reference server as the
// leaf of a reference hub, a traced publish and a trace-only one across
// the link (from a client of the leaf to one of the hub, or the other way
// fromHub) and returns, per side, the two servers' events of each,
// sorted. It checks that the first is delivered and the second is not.
func leafTraceShapes(t *testing.T, fromHub bool) map[string][]string {
	t.Helper()
	shapes := map[string][]string{}
	for _, side := range []string{"bus", "reference"} {
		hub := startHubCluster(t, 1, false, nil)
		var leafURL string
		if side == "bus" {
			leafURL = busURL(startBusLeaf(t, hub, server.Options{}, server.LeafRemote{URLs: hub.leafURLs()}))
		} else {
			leafURL = startReferenceLeaf(t, hub, server.LeafRemote{URLs: hub.leafURLs()}).ClientURL()
		}
		pubURL, subURL := leafURL, hub.clientURL(0)
		if fromHub {
			pubURL, subURL = subURL, pubURL
		}
		far := connect(t, subURL, nats.Name("far"))
		target, err := far.SubscribeSync("orders.new")
		if err != nil {
			t.Fatal(err)
		}
		flushAll(t, far)
		pub := connect(t, pubURL, nats.Name("pub"))
		awaitRoute(t, pub, target, "orders.new")
		dest, err := pub.SubscribeSync("trace.dest")
		if err != nil {
			t.Fatal(err)
		}
		awaitRoute(t, far, dest, "trace.dest")
		for _, only := range []string{"", "true"} {
			publishTraced(t, pub, only)
			var events []string
			for range 2 { // the leaf's and the hub's
				ev, err := dest.NextMsg(5 * time.Second)
				if err != nil {
					t.Fatalf("%s: trace events (only %q): %v", side, only, err)
				}
				events = append(events, traceShape(t, ev.Data))
			}
			slices.Sort(events)
			shapes[side] = append(shapes[side], strings.Join(events, "\n"))
		}
		if _, err := target.NextMsg(2 * time.Second); err != nil {
			t.Errorf("%s: the traced publish did not cross: %v", side, err)
		}
		flushAll(t, pub, far)
		if m, err := target.NextMsg(200 * time.Millisecond); err == nil {
			t.Errorf("%s: a trace-only publish was delivered across the link: %q", side, m.Header)
		}
	}
	return shapes
}

// sameTraceShapes compares bus's trace events with the reference's.
func sameTraceShapes(t *testing.T, shapes map[string][]string) {
	t.Helper()
	for i := range shapes["reference"] {
		if at(shapes["bus"], i) != shapes["reference"][i] {
			t.Errorf("trace events %d differ\n  bus:\n%s\n  ref:\n%s", i, at(shapes["bus"], i), shapes["reference"][i])
		}
	}
}

// A traced publish the user may not make is refused as usual and its
// event says why on the ingress, as the reference's; one whose trace
// destination the user may not publish to is refused and not traced.
func TestMsgTracePermissionsMatchReference(t *testing.T) {
	t.Parallel()
	auth := server.Authorization{Users: []server.User{{Name: "u", Password: "p", Permissions: &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{"orders.>", "trace.>"}}}}}}
	b := startBus(t, server.Options{Authorization: auth})
	r := startReferenceWith(t, func(o *natsserver.Options) { *o = *refOptions(auth) })
	shapes := map[string]string{}
	for _, side := range []struct{ name, url string }{{"bus", busURL(b)}, {"reference", r.ClientURL()}} {
		errs := make(chan error, 4)
		nc := connect(t, side.url, nats.UserInfo("u", "p"), nats.Name("pub"),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
		dest, err := nc.SubscribeSync("trace.dest")
		if err != nil {
			t.Fatal(err)
		}
		flushAll(t, nc)
		m := nats.NewMsg("billing.new")
		m.Header.Set("Nats-Trace-Dest", "trace.dest")
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		ev, err := dest.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("%s: no trace event for a refused publish: %v", side.name, err)
		}
		shapes[side.name] = traceShape(t, ev.Data)
		m = nats.NewMsg("orders.new")
		m.Header.Set("Nats-Trace-Dest", "elsewhere")
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			select {
			case err := <-errs:
				if !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
					t.Errorf("%s: %v", side.name, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: no permissions violation", side.name)
			}
		}
	}
	if shapes["bus"] != shapes["reference"] {
		t.Errorf("trace event of a refused publish\n  bus: %s\n  ref: %s", shapes["bus"], shapes["reference"])
	}
}
