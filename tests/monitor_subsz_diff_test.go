package tests

import (
	"net/http"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// /subsz, /accountz, /accstatz and the empty /routez, /gatewayz and
// /leafz against the reference on the same scenario.
func TestMonitorSubszAccountzMatchesReference(t *testing.T) {
	t.Parallel()
	p := startMonitorPair(t)
	t.Run("subsz", func(t *testing.T) {
		for _, q := range []string{"", "?subs=true", "?subs=true&limit=1&offset=1", "?acc=$G"} {
			bus, ref := p.fetchBoth(t, "/subsz"+q)
			// The reference's first item may be one of its own, without a
			// queue group.
			sameShape(t, "/subsz"+q, bus, ref, nil, "subscriptions_list[].qgroup")
			sameValues(t, "/subsz"+q, bus, ref, "offset", "limit")
		}
		// The reference lists its own $SYS subscriptions too; a test
		// subject of the clients' compares exactly.
		bus, ref := p.fetchBoth(t, "/subsz?subs=true&test=foo.x")
		sameValues(t, "/subsz?test", bus, ref, "total", "subscriptions_list.0.subject", "subscriptions_list.0.sid",
			"subscriptions_list.0.msgs", "subscriptions_list.0.account", "subscriptions_list.0.account_tag")
		bus, ref = p.fetchBoth(t, "/subsz?subs=true&test=bar")
		sameValues(t, "/subsz?test=bar", bus, ref, "total", "subscriptions_list.0.qgroup")
		bus, ref = p.fetchBoth(t, "/subscriptionsz?subs=1&test=foo.x")
		sameValues(t, "/subscriptionsz", bus, ref, "total")
		// num_cache, max_fanout and avg_fanout describe the cache, which
		// stores a subject on its second match only (subjects/cache.go):
		// this scenario publishes each subject once, so they may be 0.
		for _, path := range []string{"num_subscriptions", "num_inserts", "num_matches"} {
			if n, _ := field(p.decode(t, p.bus, "/subsz"), path).(float64); n <= 0 {
				t.Errorf("bus /subsz %s = %v, want > 0", path, n)
			}
		}
		for _, q := range []string{"test=foo.*", "test=", "subs=maybe", "limit=x"} {
			bc, _ := fetch(t, p.bus+"/subsz?"+q)
			rc, _ := fetch(t, p.ref+"/subsz?"+q)
			if bc != rc {
				t.Errorf("/subsz?%s: bus %d, reference %d", q, bc, rc)
			}
		}
		p.decodesAsReference(t, "/subsz?subs=true", &natsserver.Subsz{})
	})
	t.Run("accountz", func(t *testing.T) {
		bus, ref := p.fetchBoth(t, "/accountz")
		sameShape(t, "/accountz", bus, ref, map[string]string{"system_account": "bus has no system account yet"})
		if got := field(bus, "accounts"); len(got.([]any)) != 1 || field(bus, "accounts.0") != "$G" {
			t.Errorf("/accountz accounts %v, want [$G]", got)
		}
		bus, ref = p.fetchBoth(t, "/accountz?acc=$G")
		sameShape(t, "/accountz?acc=$G", bus, ref, map[string]string{
			"system_account":         "bus has no system account yet",
			"account_detail.imports": "the reference's imports from its system account",
		})
		sameValues(t, "/accountz?acc=$G", bus, ref, "account_detail.account_name", "account_detail.expired", "account_detail.complete",
			"account_detail.jetstream_enabled", "account_detail.leafnode_connections", "account_detail.client_connections", "account_detail.name_tag")
		bc, _ := fetch(t, p.bus+"/accountz?acc=nope")
		rc, _ := fetch(t, p.ref+"/accountz?acc=nope")
		if bc != rc {
			t.Errorf("/accountz?acc=nope: bus %d, reference %d", bc, rc)
		}
		p.decodesAsReference(t, "/accountz?acc=$G", &natsserver.Accountz{})
	})
	t.Run("accstatz", func(t *testing.T) {
		bus, ref := p.fetchBoth(t, "/accstatz")
		sameShape(t, "/accstatz", bus, ref, nil)
		sameValues(t, "/accstatz", bus, ref, "account_statz.0.acc", "account_statz.0.name", "account_statz.0.conns",
			"account_statz.0.leafnodes", "account_statz.0.total_conns", "account_statz.0.slow_consumers")
		p.decodesAsReference(t, "/accstatz", &natsserver.AccountStatz{})
	})
	t.Run("routez gatewayz leafz", func(t *testing.T) {
		for path, into := range map[string]any{"/routez": &natsserver.Routez{}, "/gatewayz": &natsserver.Gatewayz{}, "/leafz": &natsserver.Leafz{}} {
			bus, ref := p.fetchBoth(t, path)
			sameShape(t, path, bus, ref, nil)
			sameValues(t, path, bus, ref, "num_routes", "routes", "outbound_gateways", "inbound_gateways", "leafnodes", "leafs")
			p.decodesAsReference(t, path, into)
		}
	})
	t.Run("dashboard at the index", func(t *testing.T) {
		// The reference serves its index page there; bus its dashboard
		// (docs/dashboard.md), and 404 elsewhere.
		if code, body := fetch(t, p.bus+"/"); code != http.StatusOK || !strings.Contains(string(body), "bus dashboard") {
			t.Errorf("GET / on bus: %d, want the dashboard", code)
		}
		if code, _ := fetch(t, p.bus+"/nothing"); code != http.StatusNotFound {
			t.Errorf("GET /nothing on bus: %d, want 404", code)
		}
	})
}
