package tests

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// The system account scenario: an admin user in account SYS (the
// system account), a global user "app" limited to app.> and the
// requests it may make, and a global user "all" without permissions.
const (
	sysAdmin, sysAdminPass = "admin", "s3cret"
	sysApp, sysAppPass     = "app", "apppw"
	sysAll, sysAllPass     = "all", "allpw"
)

// sysPair is bus and the reference with the same system account.
type sysPair struct {
	bus    *server.Server
	ref    *natsserver.Server
	busURL string
	refURL string
}

func sysAppPermissions() *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"app.>", "$SYS.REQ.>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"app.>", "_INBOX.>"}},
	}
}

// sysBusOptions are bus's options for the scenario.
func sysBusOptions() server.Options {
	return server.Options{
		JetStream: true,
		Authorization: server.Authorization{Users: []server.User{
			{Name: sysApp, Password: sysAppPass, Permissions: sysAppPermissions()},
			{Name: sysAll, Password: sysAllPass},
		}},
		SystemAccount: server.SystemAccount{Name: "SYS", Users: []server.User{{Name: sysAdmin, Password: sysAdminPass}}},
	}
}

// sysReferenceConfig is the same scenario in nats-server's config
// syntax.
const sysReferenceConfig = `
listen: 127.0.0.1:-1
jetstream { store_dir: %q }
accounts { SYS { users: [ {user: admin, password: s3cret} ] } }
authorization { users: [
  {user: app, password: apppw, permissions: {publish: ["app.>", "$SYS.REQ.>"], subscribe: ["app.>", "_INBOX.>"]}},
  {user: all, password: allpw}
] }
system_account: SYS
`

// startReferenceConfig runs the reference from config text (a %q verb
// for its store directory).
func startReferenceConfig(t *testing.T, config string) *natsserver.Server {
	t.Helper()
	ns, _ := startReferenceFile(t, config)
	return ns
}

func startSysPair(t *testing.T) sysPair {
	t.Helper()
	bus := startBus(t, sysBusOptions())
	ref := startReferenceConfig(t, sysReferenceConfig)
	return sysPair{bus: bus, ref: ref, busURL: busURL(bus), refURL: ref.ClientURL()}
}

// each runs f against bus and then the reference.
func (p sysPair) each(t *testing.T, f func(t *testing.T, url, id string)) {
	t.Run("bus", func(t *testing.T) { f(t, p.busURL, p.bus.ID()) })
	t.Run("reference", func(t *testing.T) { f(t, p.refURL, p.ref.ID()) })
}

// sysRequest sends a request and decodes the answer; the error is
// nats.go's (no responders, timeout).
func sysRequest(nc *nats.Conn, subject string, body []byte, wait time.Duration) (map[string]any, error) {
	m, err := nc.Request(subject, body, wait)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(m.Data, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// replaceID puts a server id in place of "<id>".
func replaceID(subject, id string) string { return strings.ReplaceAll(subject, "<id>", id) }

// removeWord drops a word from a space-separated list.
func removeWord(list, word string) string {
	var out []string
	for _, w := range strings.Fields(list) {
		if w != word {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// sortedAny is a decoded JSON list's items as sorted strings.
func sortedAny(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = fmt.Sprint(x)
	}
	sort.Strings(out)
	return out
}

// sysNotServed are the fields of $SYS answers bus leaves out, each with
// why; the endpoints' own lists are in the monitor_*_diff tests.
var sysNotServed = map[string]string{
	"server.feature_flags":                                        "the reference's own feature switches",
	"data.feature_flags":                                          "the reference's own feature switches",
	"data.disk_io_wait_stats":                                     "the reference's disk semaphore; bus has none",
	"data.jetstream.config.sync_interval":                         "bus syncs per stream (x_bus_durability)",
	"data.jetstream.config.strict":                                "bus always parses the API strictly",
	"data.jetstream.limits.default_max_consumers":                 "bus has no JetStream limits",
	"statsz.jetstream.config.sync_interval":                       "bus syncs per stream (x_bus_durability)",
	"statsz.jetstream.config.strict":                              "bus always parses the API strictly",
	"statsz.jetstream.limits.default_max_consumers":               "bus has no JetStream limits",
	"data.config.sync_interval":                                   "bus syncs per stream (x_bus_durability)",
	"data.config.strict":                                          "bus always parses the API strictly",
	"data.limits.default_max_consumers":                           "bus has no JetStream limits",
	"data.account_details[].stream_detail[].config.allow_msg_ttl": "bus has no per-message TTL",
	"data.subscriptions_list[].max":                               "only a subscription with an auto-unsubscribe limit has it, and the two lists' first elements differ (arrays are compared by their first)",
}

func mustJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// words prints values separated by spaces, for comparing a few fields.
func words(vals ...any) string { return strings.TrimSpace(fmt.Sprintln(vals...)) }
