package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// versioningScenario asks for what the reference's API versioning shows:
// the level in account info, the _nats.req.level stored with streams
// and consumers for the features they use, the server's _nats.level and
// _nats.ver added to create, update and info answers (not to lists), a
// client's own _nats.* keys replaced, and requests whose
// Nats-Required-Api-Level is above the server's refused with 10185.
func versioningScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	var out []string
	req := func(what, subject, body, level string) map[string]any {
		t.Helper()
		m := nats.NewMsg(subject)
		m.Data = []byte(body)
		if level != "" {
			m.Header.Set("Nats-Required-Api-Level", level)
		}
		resp, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", what, err))
			return nil
		}
		var v map[string]any
		if err := json.Unmarshal(resp.Data, &v); err != nil {
			t.Fatalf("%s: %v: %s", what, err, resp.Data)
		}
		if e, ok := v["error"].(map[string]any); ok {
			out = append(out, fmt.Sprintf("%s: %v %v %v (%v)", what, e["code"], e["err_code"], e["description"], v["type"]))
		}
		return v
	}
	metadata := func(what string, v any, path ...string) {
		t.Helper()
		for _, p := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				if len(x) == 0 {
					v = nil
					break
				}
				v = x[0]
			}
		}
		m, _ := v.(map[string]any)
		var kv []string
		for k, val := range m {
			if k == "_nats.ver" {
				val = "<version>" // each server's own
			}
			kv = append(kv, fmt.Sprintf("%s=%v", k, val))
		}
		sort.Strings(kv)
		out = append(out, fmt.Sprintf("%s: metadata %s", what, strings.Join(kv, " ")))
	}
	info := req("account info", "$JS.API.INFO", "", "")
	out = append(out, fmt.Sprintf("api level %v", info["api"].(map[string]any)["level"]))
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "nats://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() //nolint:errcheck // read only
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	var serverInfo struct {
		APILevel int `json:"api_lvl"`
	}
	if err != nil || json.Unmarshal([]byte(strings.TrimPrefix(line, "INFO ")), &serverInfo) != nil {
		t.Fatalf("INFO %q: %v", line, err)
	}
	out = append(out, fmt.Sprintf("INFO api_lvl %d", serverInfo.APILevel))
	for _, c := range []struct{ name, extra string }{
		{"V", ``}, {"VT", `,"allow_msg_ttl":true`}, {"VA", `,"allow_atomic":true`}, {"VS", `,"allow_msg_schedules":true`},
		{"VB", `,"allow_batched":true`}, {"VC", `,"allow_msg_counter":true`},
		{"VM", `,"metadata":{"a":"b","_nats.level":"99","_nats.ver":"x","_nats.req.level":"7"}`},
	} {
		body := fmt.Sprintf(`{"name":%q,"subjects":[%q]%s}`, c.name, strings.ToLower(c.name)+".>", c.extra)
		metadata("create "+c.name, req("create "+c.name, "$JS.API.STREAM.CREATE."+c.name, body, ""), "config", "metadata")
		metadata("create again "+c.name, req("create again "+c.name, "$JS.API.STREAM.CREATE."+c.name, body, ""), "config", "metadata")
	}
	metadata("update V", req("update V", "$JS.API.STREAM.UPDATE.V", `{"name":"V","subjects":["v.>"],"allow_msg_ttl":true}`, ""), "config", "metadata")
	metadata("info V", req("info V", "$JS.API.STREAM.INFO.V", "", ""), "config", "metadata")
	metadata("list", req("list", "$JS.API.STREAM.LIST", `{"subject":"v.>"}`, ""), "streams", "0", "config", "metadata")
	for _, c := range []struct{ name, extra string }{
		{"C", ``}, {"CP", `,"priority_groups":["g"],"priority_policy":"pinned_client","priority_timeout":60000000000`},
		{"CU", `,"pause_until":"2100-01-01T00:00:00Z"`}, {"CM", `,"metadata":{"_nats.level":"1","k":"v"}`},
	} {
		body := fmt.Sprintf(`{"stream_name":"V","config":{"durable_name":%q,"ack_policy":"explicit"%s}}`, c.name, c.extra)
		metadata("consumer "+c.name, req("consumer "+c.name, "$JS.API.CONSUMER.CREATE.V."+c.name, body, ""), "config", "metadata")
	}
	metadata("consumer info", req("consumer info", "$JS.API.CONSUMER.INFO.V.C", "", ""), "config", "metadata")
	metadata("consumer list", req("consumer list", "$JS.API.CONSUMER.LIST.V", "", ""), "consumers", "0", "config", "metadata")
	for _, c := range []struct{ subject, body string }{
		{"$JS.API.INFO", ""}, {"$JS.API.STREAM.INFO.V", ""}, {"$JS.API.STREAM.NAMES", ""}, {"$JS.API.STREAM.LIST", ""},
		{"$JS.API.STREAM.CREATE.X", `{"name":"X","subjects":["x"]}`}, {"$JS.API.STREAM.UPDATE.V", `{"name":"V","subjects":["v.>"]}`},
		{"$JS.API.STREAM.PURGE.V", ""}, {"$JS.API.STREAM.MSG.GET.V", `{"seq":1}`}, {"$JS.API.STREAM.DELETE.V", ""},
		{"$JS.API.CONSUMER.INFO.V.C", ""}, {"$JS.API.CONSUMER.NAMES.V", ""}, {"$JS.API.CONSUMER.DELETE.V.C", ""},
		{"$JS.API.CONSUMER.CREATE.V.D", `{"stream_name":"V","config":{"durable_name":"D"}}`},
		{"$JS.API.CONSUMER.DURABLE.CREATE.V.D", `{"stream_name":"V","config":{"durable_name":"D"}}`},
	} {
		for _, level := range []string{"99", "6", "x"} {
			req(fmt.Sprintf("%s at level %s", c.subject, level), c.subject, c.body, level)
		}
	}
	req("info at level 5", "$JS.API.STREAM.INFO.V", "", "5")
	return out
}

// TestAPIVersioningMatchesReference: bus serves API level 5 and shows it
// on streams and consumers as the reference does (jetstream_versioning).
// Issue 28.
func TestAPIVersioningMatchesReference(t *testing.T) {
	t.Parallel()
	ref := versioningScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := versioningScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
