package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// monitorPair is bus and the reference, both with monitoring, after the
// same scenario (see runMonitorScenario).
type monitorPair struct {
	bus, ref       string // http://host:port of the monitoring endpoints
	busNC, refNC   string // client URLs
	busSrv         *server.Server
	busCID, refCID uint64 // cid of the connection named alpha
}

// startMonitorPair starts both servers with JetStream and monitoring and
// runs the scenario on each.
func startMonitorPair(t *testing.T) *monitorPair {
	t.Helper()
	b := startBus(t, server.Options{HTTPPort: -1, JetStream: true})
	r := startReference(t, true)
	p := &monitorPair{
		bus: "http://" + b.HTTPAddr().String(), ref: fmt.Sprintf("http://127.0.0.1:%d", r.MonitorAddr().Port),
		busNC: busURL(b), refNC: r.ClientURL(), busSrv: b,
	}
	p.busCID = runMonitorScenario(t, p.busNC, p.bus)
	p.refCID = runMonitorScenario(t, p.refNC, p.ref)
	return p
}

// runMonitorScenario leaves, on the server at url: alpha with a plain
// and a queue subscription and one message received; beta, which
// published it; js, which made stream S (one message) and consumer D;
// and gamma, closed by its client after subscribing. It returns alpha's
// cid.
func runMonitorScenario(t *testing.T, url, mon string) uint64 {
	t.Helper()
	alpha := connect(t, url, nats.Name("alpha"))
	got := make(chan struct{}, 1)
	if _, err := alpha.Subscribe("foo.*", func(*nats.Msg) { got <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	if _, err := alpha.QueueSubscribe("bar", "q1", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := alpha.Flush(); err != nil {
		t.Fatal(err)
	}
	beta := connect(t, url, nats.Name("beta"))
	if err := beta.Publish("foo.x", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := beta.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("alpha did not get the message")
	}
	gamma, err := nats.Connect(url, nats.Name("gamma"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gamma.SubscribeSync("zzz"); err != nil {
		t.Fatal(err)
	}
	if err := gamma.Flush(); err != nil {
		t.Fatal(err)
	}
	gamma.Close()
	jnc := connect(t, url, nats.Name("js"))
	js, err := jetstream.New(jnc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "s.1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "S", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool {
		var c struct{ Total int }
		getJSON(t, mon+"/connz?state=closed", &c)
		return c.Total == 1
	})
	var c struct {
		Connections []struct {
			Cid  uint64
			Name string
		}
	}
	getJSON(t, mon+"/connz", &c)
	for _, ci := range c.Connections {
		if ci.Name == "alpha" {
			return ci.Cid
		}
	}
	t.Fatal("alpha not in /connz")
	return 0
}

// fetch GETs a monitoring path and returns the status and body.
func fetch(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// fetchBoth GETs path from both servers, requires 200 from each and
// returns the decoded documents.
func (p *monitorPair) fetchBoth(t *testing.T, path string) (bus, ref map[string]any) {
	t.Helper()
	return p.decode(t, p.bus, path), p.decode(t, p.ref, path)
}

func (p *monitorPair) decode(t *testing.T, base, path string) map[string]any {
	t.Helper()
	code, b := fetch(t, base+path)
	if code != http.StatusOK {
		t.Fatalf("%s%s: %d %s", base, path, code, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s%s: %v in %s", base, path, err, b)
	}
	return m
}

// decodesAsReference checks that bus's answer to path decodes into the
// reference's own Go type, as prometheus-nats-exporter and NUI decode it:
// a field of another JSON type would fail them.
func (p *monitorPair) decodesAsReference(t *testing.T, path string, into any) {
	t.Helper()
	code, b := fetch(t, p.bus+path)
	if code != http.StatusOK {
		t.Fatalf("bus %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Errorf("bus %s does not decode as the reference's %T: %v", path, into, err)
	}
}

// sameShape requires every field of the reference's document to be in
// bus's with the same JSON type, recursively (arrays by their first
// element), except the paths in notServed (each with why). Fields only
// bus has must be x_bus_* or listed in busOnly.
func sameShape(t *testing.T, where string, bus, ref any, notServed map[string]string, busOnly ...string) {
	t.Helper()
	var walk func(path string, b, r any)
	walk = func(path string, b, r any) {
		if _, skip := notServed[path]; skip {
			return
		}
		if kind(b) != kind(r) {
			t.Errorf("%s: %s is %s on bus, %s on the reference (bus %v, reference %v)", where, path, kind(b), kind(r), b, r)
			return
		}
		switch r := r.(type) {
		case map[string]any:
			b := b.(map[string]any)
			for k, rv := range r {
				key := strings.TrimPrefix(path+"."+k, ".")
				if _, skip := notServed[key]; skip {
					continue
				}
				bv, ok := b[k]
				if !ok {
					t.Errorf("%s: bus lacks %s (reference: %v)", where, key, rv)
					continue
				}
				walk(key, bv, rv)
			}
			for k := range b {
				key := strings.TrimPrefix(path+"."+k, ".")
				if _, ok := r[k]; !ok && !strings.HasPrefix(k, "x_bus_") && !slices.Contains(busOnly, key) {
					t.Errorf("%s: bus has %s, the reference does not", where, key)
				}
			}
		case []any:
			b := b.([]any)
			if len(r) > 0 && len(b) > 0 {
				// Items of objects are compared as the union of their
				// fields, so that the order each server lists them in
				// (one with an omitempty field first, or not) cannot
				// matter.
				walk(path+"[]", unionOfObjects(b), unionOfObjects(r))
			} else if len(r) != len(b) && (len(r) == 0 || len(b) == 0) {
				t.Errorf("%s: %s has %d items on bus, %d on the reference", where, path, len(b), len(r))
			}
		}
	}
	walk("", bus, ref)
}

// unionOfObjects is the first item of items, or, when every item is an
// object, one object with every field any of them has (the first value
// seen for each).
func unionOfObjects(items []any) any {
	out := map[string]any{}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return items[0]
		}
		for k, v := range m {
			if _, seen := out[k]; !seen {
				out[k] = v
			}
		}
	}
	return out
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

// field follows a dotted path ("a.b.0.c") into a decoded document.
func field(doc any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch d := doc.(type) {
		case map[string]any:
			doc = d[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(d) {
				return nil
			}
			doc = d[i]
		default:
			return nil
		}
	}
	return doc
}

// sameValues requires the fields at paths to be equal on both servers.
func sameValues(t *testing.T, where string, bus, ref any, paths ...string) {
	t.Helper()
	for _, path := range paths {
		if b, r := fmt.Sprint(field(bus, path)), fmt.Sprint(field(ref, path)); b != r {
			t.Errorf("%s: %s is %s on bus, %s on the reference", where, path, b, r)
		}
	}
}

// names lists the name of every connection in a /connz document, in
// order.
func names(doc any) string {
	var out []string
	list, _ := field(doc, "connections").([]any)
	for _, c := range list {
		out = append(out, fmt.Sprint(field(c, "name")))
	}
	return strings.Join(out, ",")
}

// keys is the sorted key set of an object, for messages.
func keys(doc any) string {
	m, _ := doc.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// refOptionsMonitored is refOptions with a monitoring port.
func refOptionsMonitored(a server.Authorization) *natsserver.Options {
	o := refOptions(a)
	o.HTTPPort = -1
	return o
}

// startBusMonitored runs a bus without JetStream with monitoring and
// returns the monitoring base URL.
func startBusMonitored(t *testing.T) string {
	t.Helper()
	return "http://" + startBus(t, server.Options{HTTPPort: -1}).HTTPAddr().String()
}
