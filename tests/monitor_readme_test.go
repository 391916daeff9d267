package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// monitorShapes are, for each endpoint the README's "Monitoring" names,
// the path into its JSON that must be there (docs/monitoring.md's table):
// each is a list of keys, walking into the first element of an array.
var monitorShapes = map[string][][]string{
	"/varz":     {{"server_id"}, {"version"}, {"connections"}, {"in_msgs"}, {"jetstream", "config"}},
	"/connz":    {{"num_connections"}, {"connections", "cid"}},
	"/subsz":    {{"num_subscriptions"}},
	"/accountz": {{"accounts"}},
	"/jsz":      {{"streams"}, {"consumers"}, {"account_details", "stream_detail", "config"}, {"account_details", "stream_detail", "consumer_detail", "config"}},
	"/healthz":  {{"status"}},
	"/leafz":    {{"leafs"}},
	"/routez":   {{"num_routes"}, {"routes"}},
	"/gatewayz": {{"outbound_gateways"}, {"inbound_gateways"}},
}

// The README's "Monitoring", "Prometheus" and "Dashboard" against `bus
// serve` with a stream, a consumer and a message it has not processed:
// every endpoint the README names answers 200 with its documented shape
// (with the /jsz parameters the README gives), the README's curl | grep
// of /metrics prints the consumer's pending line, and the dashboard's
// page and state load.
func TestReadmeMonitoringWalks(t *testing.T) {
	t.Parallel()
	bus, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	p := startDeployProc(t, []string{bus, "serve", "--store-dir", t.TempDir()}, "BUS_HOST=127.0.0.1")
	client, mon := p.serving(t)
	nc := connect(t, "nats://"+client)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "orders.new", []byte(`{"id":1}`)); err != nil {
		t.Fatal(err)
	}

	intro := strings.Join(strings.Fields(readmeSection(t, "## Monitoring")), "")
	jszQuery := regexp.MustCompile("`/jsz`\\(`(\\?[^`]+)`").FindStringSubmatch(intro)
	if jszQuery == nil {
		t.Fatal("Monitoring does not give /jsz's parameters")
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(/[a-z]+)`").FindAllStringSubmatch(intro, -1) {
		named[m[1]] = true
	}
	for path := range monitorShapes {
		if !named[path] {
			t.Errorf("Monitoring no longer names %s; update monitorShapes", path)
		}
	}
	for path := range named {
		shape, ok := monitorShapes[path]
		if !ok {
			t.Errorf("Monitoring names %s, whose shape this walk does not know", path)
			continue
		}
		url := "http://" + mon + path
		if path == "/jsz" {
			url += jszQuery[1]
		}
		doc := getMonitorJSON(t, url)
		for _, keys := range shape {
			if !jsonPathThere(doc, keys) {
				t.Errorf("%s has no %s:\n%s", url, strings.Join(keys, "."), indentedJSON(doc))
			}
		}
	}

	t.Run("prometheus", func(t *testing.T) {
		line := regexp.MustCompile(`(?m)^    (curl -s localhost:8222/metrics \| grep \S+)$`).FindStringSubmatch(readmeSection(t, "### Prometheus"))
		if line == nil {
			t.Fatal("Prometheus has no curl | grep line")
		}
		var out []byte
		if _, err := exec.LookPath("curl"); err == nil {
			if out, err = exec.CommandContext(ctx, "sh", "-c", strings.Replace(line[1], "localhost:8222", mon, 1)).Output(); err != nil {
				t.Fatalf("%s: %v", line[1], err)
			}
		} else { // the same pipe without curl: GET, then the lines grep keeps
			_, body := fetch(t, "http://"+mon+"/metrics")
			word := line[1][strings.LastIndex(line[1], " ")+1:]
			for _, l := range strings.SplitAfter(string(body), "\n") {
				if strings.Contains(l, word) {
					out = append(out, l...)
				}
			}
		}
		if !regexp.MustCompile(`(?m)^jetstream_consumer_num_pending\{[^}]*consumer_name="billing"[^}]*\} 1$`).Match(out) {
			t.Errorf("%s printed no pending line for billing:\n%s", line[1], out)
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		page := regexp.MustCompile("`(http://localhost:8222/)`").FindStringSubmatch(readmeSection(t, "### Dashboard"))
		if page == nil {
			t.Fatal("Dashboard does not give its address")
		}
		d := dash{t, "http://" + mon}
		code, body, h := d.call("GET", strings.TrimPrefix(page[1], "http://localhost:8222"), "", "", "")
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "<title>bus dashboard</title>") {
			t.Fatalf("GET %s: %d %s\n%s", page[1], code, h.Get("Content-Type"), body)
		}
		var st dashStateDoc
		d.getJSON("/dashboard/api/state", &st)
		if st.JetStream == nil || st.JetStream.Streams != 1 || st.JetStream.Consumers != 1 {
			t.Errorf("the dashboard's state does not show the stream and its consumer: %+v", st.JetStream)
		}
	})
}

func getMonitorJSON(t *testing.T, url string) any {
	t.Helper()
	code, b := fetch(t, url)
	var doc any
	if code != http.StatusOK || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("GET %s: %d\n%s", url, code, b)
	}
	return doc
}

// jsonPathThere walks keys into doc, into the first element of each
// array on the way (which must then not be empty).
func jsonPathThere(doc any, keys []string) bool {
	for _, k := range keys {
		if a, ok := doc.([]any); ok {
			if len(a) == 0 {
				return false
			}
			doc = a[0]
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		if doc, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

func indentedJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
