package tests

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// accountsMonitorReference is accountsJSReferenceConfig with monitoring.
var accountsMonitorReference = strings.Replace(accountsJSReferenceConfig, "listen: 127.0.0.1:-1", "listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1", 1)

// accountsMonitorScenario gives account A a stream with a message and a
// consumer, as a1, on the server at url.
func accountsMonitorScenario(t *testing.T, url string) {
	t.Helper()
	js, ctx := accountsJS(t, url, "a1")
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "orders.a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "d"}); err != nil {
		t.Fatal(err)
	}
}

// TestAccountsJszMatchesReference checks /jsz?acc= and ?accounts=true
// against the reference with the same accounts: each account's usage,
// reservations (B's limits) and streams, and the totals over the
// accounts. bus also lists the global account, whose JetStream it keeps
// (docs/security.md); it holds nothing here.
func TestAccountsJszMatchesReference(t *testing.T) {
	t.Parallel()
	opts := accountsJSBusOptions(t.TempDir())
	opts.HTTPPort = -1
	bus := startBus(t, opts)
	ref := startReferenceConfig(t, accountsMonitorReference)
	accountsMonitorScenario(t, busURL(bus))
	accountsMonitorScenario(t, ref.ClientURL())
	p := &monitorPair{bus: "http://" + bus.HTTPAddr().String(), ref: "http://" + ref.MonitorAddr().String()}

	detail := []string{"name", "id", "memory", "reserved_memory", "reserved_storage", "api.total", "api.errors"}
	for _, tc := range []struct {
		query   string
		account string // the one account_details holds; "" for none
	}{
		{"?acc=A&streams=true", "A"},
		{"?acc=A&consumers=true", "A"},
		{"?acc=B", "B"},
		{"?acc=N", ""},
		{"?acc=nobody", ""},
	} {
		bus, ref := p.fetchBoth(t, "/jsz"+tc.query)
		sameValues(t, "/jsz"+tc.query, bus, ref, "streams", "consumers", "messages", "memory", "api.total")
		if n := len(asList(field(bus, "account_details"))); n != len(asList(field(ref, "account_details"))) {
			t.Fatalf("/jsz%s: %d account_details, reference %d", tc.query, n, len(asList(field(ref, "account_details"))))
		}
		if tc.account == "" {
			continue
		}
		for _, k := range detail {
			sameValues(t, "/jsz"+tc.query, bus, ref, "account_details.0."+k)
		}
		if tc.account != "A" {
			continue
		}
		st := "account_details.0.stream_detail.0."
		sameValues(t, "/jsz"+tc.query, bus, ref, st+"name", st+"state.messages", st+"state.first_seq",
			st+"state.last_seq", st+"state.consumer_count", st+"consumer_detail.0.name", st+"consumer_detail.0.num_pending")
	}

	bus2, ref2 := p.fetchBoth(t, "/jsz?accounts=true")
	sameValues(t, "/jsz?accounts=true", bus2, ref2, "streams", "consumers", "messages")
	byName := func(doc map[string]any) map[string]any {
		out := map[string]any{}
		for _, d := range asList(field(doc, "account_details")) {
			out[fmt.Sprint(field(d, "name"))] = d
		}
		return out
	}
	busAccs, refAccs := byName(bus2), byName(ref2)
	for _, name := range []string{"A", "B"} {
		if busAccs[name] == nil || refAccs[name] == nil {
			t.Fatalf("/jsz?accounts=true: account %s: bus %v, reference %v", name, busAccs[name], refAccs[name])
		}
		for _, k := range detail {
			sameValues(t, "/jsz?accounts=true "+name, busAccs[name], refAccs[name], k)
		}
	}
	if len(refAccs) != 2 || len(busAccs) != 3 || busAccs["$G"] == nil || busAccs["N"] != nil {
		t.Errorf("/jsz?accounts=true: bus lists %v, reference %v; want A, B and bus's $G", keys(busAccs), keys(refAccs))
	}
	if got := field(bus2, "total"); got != float64(3) {
		t.Errorf("/jsz?accounts=true: bus total %v, want 3 ($G, A, B)", got)
	}

	busVarz, refVarz := p.fetchBoth(t, "/varz")
	sameValues(t, "/varz", busVarz, refVarz, "jetstream.stats.memory", "jetstream.stats.storage", "jetstream.stats.api.total",
		"jetstream.stats.api.errors")
	if got := field(busVarz, "jetstream.stats.accounts"); got != float64(3) {
		t.Errorf("/varz jetstream.stats.accounts %v, want 3 ($G, A, B)", got)
	}

	for _, q := range []string{"", "?details=true"} {
		bc, _ := fetch(t, p.bus+"/healthz"+q)
		rc, _ := fetch(t, p.ref+"/healthz"+q)
		if bc != rc || bc != http.StatusOK {
			t.Errorf("/healthz%s: bus %d, reference %d", q, bc, rc)
		}
	}
}

// TestAccountsMetricsLabelAccounts checks /metrics names each series'
// account: A's stream and consumer under account="A", each account's
// connections and JetStream reservations under the exporter's names,
// and the server-wide totals summing the accounts.
func TestAccountsMetricsLabelAccounts(t *testing.T) {
	t.Parallel()
	opts := accountsJSBusOptions(t.TempDir())
	opts.HTTPPort = -1
	bus := startBus(t, opts)
	accountsMonitorScenario(t, busURL(bus))
	connectAs(t, busURL(bus), "b1")
	_, body := fetch(t, "http://"+bus.HTTPAddr().String()+"/metrics")
	text := string(body)
	id := bus.ID()
	for _, want := range []string{
		fmt.Sprintf(`jetstream_stream_total_messages{server_id=%q,account="A",stream_name="ORDERS"} 1`, id),
		fmt.Sprintf(`jetstream_consumer_num_pending{server_id=%q,account="A",stream_name="ORDERS",consumer_name="d"} 1`, id),
		`jetstream_server_total_streams{`,
		fmt.Sprintf(`gnatsd_accstatz_current_connections{account="B",account_id="B",account_name="B",server_id=%q} 1`, id),
		fmt.Sprintf(`gnatsd_accstatz_current_connections{account="N",account_id="N",account_name="N",server_id=%q} 0`, id),
		`jetstream_account_max_memory{account="B",account_id="B",account_name="B",server_id="` + id + `",`,
		`jetstream_account_storage_used{account="A",`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "jetstream_server_total_streams{"):
			if !strings.HasSuffix(line, " 1") {
				t.Errorf("total streams over the accounts: %s", line)
			}
		case strings.HasPrefix(line, `jetstream_account_max_memory{account="B"`):
			if !strings.HasSuffix(line, " 1.048576e+06") {
				t.Errorf("B's reservation: %s", line)
			}
		case strings.Contains(line, `account="$G"`) && strings.HasPrefix(line, "jetstream_stream_"):
			t.Errorf("a stream of A reported in $G: %s", line)
		}
	}
}

// TestAccountsHealthzNamesTheAccount checks that a stream of an account
// that cannot be opened makes /healthz unavailable, naming the account
// and the stream, while the others are served.
func TestAccountsHealthzNamesTheAccount(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	opts := accountsJSBusOptions(store)
	bus := startBus(t, opts)
	accountsMonitorScenario(t, busURL(bus))
	shutdown(t, bus)
	writeFile(t, filepath.Join(store, "accounts", "A", "jetstream", "ORDERS", "stream.meta"), nil)

	opts.HTTPPort = -1
	bus2 := startBus(t, opts)
	mon := "http://" + bus2.HTTPAddr().String()
	code, body := fetch(t, mon+"/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), `JetStream stream 'A \u003e ORDERS' could not be recovered`) {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	code, body = fetch(t, mon+"/healthz?details=true")
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), `"account": "A"`) {
		t.Fatalf("/healthz?details=true: %d %s", code, body)
	}
	var jsz server.Jsz
	getJSON(t, mon+"/jsz?acc=A", &jsz)
	if len(jsz.Damaged) != 1 || jsz.Damaged[0].Name != "ORDERS" {
		t.Fatalf("/jsz damaged: %+v", jsz.Damaged)
	}
	if _, err := os.Stat(filepath.Join(store, "accounts", "A", "jetstream", "ORDERS")); err != nil {
		t.Fatalf("the damaged stream's files: %v", err)
	}
}
