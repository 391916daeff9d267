package tests

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// What the connections of the scenario read the same on both servers,
// whatever their cids. Not pending_bytes: what is still queued to a
// client depends on when its writer last ran (its type is compared).
var connzValues = []string{
	"name", "kind", "type", "ip", "lang", "version", "subscriptions", "reason",
}

// /connz against the reference: fields, sorting, paging, subscriptions,
// closed connections and filters, on the same scenario.
func TestMonitorConnzMatchesReference(t *testing.T) {
	t.Parallel()
	p := startMonitorPair(t)
	notServed := map[string]string{}
	for _, tc := range []struct {
		name, query string
		names       string // the connections, in order
	}{
		{"default sorts by cid", "", "alpha,beta,js"},
		{"sort by subscriptions", "?sort=subs", "alpha,js,beta"},
		{"sort by messages from", "?sort=msgs_from", "js,beta,alpha"},
		{"sort by messages to", "?sort=msgs_to", "js,alpha,beta"},
		{"sort by bytes from", "?sort=bytes_from", "js,beta,alpha"},
		{"sort by start", "?sort=start", "alpha,beta,js"},
		{"limit and offset", "?limit=1&offset=1", "beta"},
		{"offset past the end", "?offset=10", ""},
		{"closed", "?state=closed", "gamma"},
		{"closed sorted by reason", "?state=closed&sort=reason", "gamma"},
		{"closed sorted by stop", "?state=closed&sort=stop", "gamma"},
		{"all", "?state=all", "alpha,beta,gamma,js"},
		{"all paged", "?state=all&limit=2&offset=2", "gamma,js"},
		{"subscriptions", "?subs=true", "alpha,beta,js"},
		{"subscription detail", "?subs=detail&state=all", "alpha,beta,gamma,js"},
		{"auth without auth", "?auth=true", "alpha,beta,js"},
		{"global account", "?acc=$G", "alpha,beta,js"},
		{"unknown user", "?user=nobody&state=all", ""},
		{"the NUI query", "?limit=10000&sort=last", ""}, // order depends on timing
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus, ref := p.fetchBoth(t, "/connz"+tc.query)
			for i := range 4 {
				sortSubs(bus, i)
				sortSubs(ref, i)
			}
			sameShape(t, "/connz"+tc.query, bus, ref, notServed,
				// The reference writes its own subscriptions' account only on closed
				// connections.
				"connections[].subscriptions_list_detail[].account", "connections[].subscriptions_list_detail[].account_tag")
			sameValues(t, "/connz"+tc.query, bus, ref, "num_connections", "total", "offset", "limit")
			if tc.name == "the NUI query" {
				return
			}
			if b, r := names(bus), names(ref); b != tc.names || r != tc.names {
				t.Errorf("/connz%s: bus %q, reference %q, want %q", tc.query, b, r, tc.names)
			}
			list, _ := field(ref, "connections").([]any)
			for i := range list {
				for _, f := range connzValues {
					sameValues(t, "/connz"+tc.query, bus, ref, fmt.Sprintf("connections.%d.%s", i, f))
				}
				if field(list[i], "name") == "js" {
					continue // its inbox is random
				}
				sameValues(t, "/connz"+tc.query, bus, ref, fmt.Sprintf("connections.%d.subscriptions_list", i))
				for j := range 2 {
					for _, f := range []string{"subject", "qgroup", "sid", "msgs", "max"} {
						sameValues(t, "/connz"+tc.query, bus, ref, fmt.Sprintf("connections.%d.subscriptions_list_detail.%d.%s", i, j, f))
					}
				}
			}
		})
	}
	t.Run("traffic of alpha and beta", func(t *testing.T) {
		bus, ref := p.fetchBoth(t, "/connz")
		for i := range 2 { // alpha, beta: js's API traffic is the servers' own
			for _, f := range []string{"in_msgs", "out_msgs", "in_bytes", "out_bytes"} {
				sameValues(t, "/connz", bus, ref, fmt.Sprintf("connections.%d.%s", i, f))
			}
		}
	})
	t.Run("by cid", func(t *testing.T) {
		bus := p.decode(t, p.bus, fmt.Sprintf("/connz?cid=%d", p.busCID))
		ref := p.decode(t, p.ref, fmt.Sprintf("/connz?cid=%d", p.refCID))
		sameShape(t, "/connz?cid", bus, ref, notServed)
		sameValues(t, "/connz?cid", bus, ref, "num_connections", "total", "limit", "connections.0.name")
	})
	t.Run("every sort key", func(t *testing.T) {
		for _, key := range []string{"cid", "start", "subs", "pending", "msgs_to", "msgs_from", "bytes_to", "bytes_from", "last", "idle", "uptime", "rtt"} {
			for _, state := range []string{"open", "closed", "all"} {
				bus, ref := p.fetchBoth(t, "/connz?sort="+key+"&state="+state)
				sameValues(t, "/connz?sort="+key+"&state="+state, bus, ref, "num_connections", "total")
			}
		}
		for _, key := range []string{"stop", "reason"} {
			bus, ref := p.fetchBoth(t, "/connz?sort="+key+"&state=closed")
			sameValues(t, "/connz?sort="+key, bus, ref, "num_connections", "total", "connections.0.reason")
		}
	})
	t.Run("bad queries are 400", func(t *testing.T) {
		for _, q := range []string{"sort=bad", "sort=stop", "sort=reason&state=all", "limit=x", "offset=-x", "cid=-1", "state=bogus", "subs=bogus", "auth=maybe"} {
			bc, bb := fetch(t, p.bus+"/connz?"+q)
			rc, _ := fetch(t, p.ref+"/connz?"+q)
			if bc != rc || bc != http.StatusBadRequest || len(bb) == 0 {
				t.Errorf("/connz?%s: bus %d %q, reference %d", q, bc, bb, rc)
			}
		}
	})
	for _, q := range []string{"", "?subs=detail&state=all&auth=true"} {
		p.decodesAsReference(t, "/connz"+q, &natsserver.Connz{})
	}
}

// With users, auth=true shows each connection's user and user= picks
// them, on open and closed connections, as in the reference.
func TestMonitorConnzAuthorizedUser(t *testing.T) {
	t.Parallel()
	auth := server.Authorization{Users: []server.User{{Name: "ann", Password: "a"}, {Name: "bob", Password: "b"}}}
	b := startBus(t, server.Options{HTTPPort: -1, Authorization: auth})
	ns := startReferenceServer(t, refOptionsMonitored(auth))
	p := &monitorPair{bus: "http://" + b.HTTPAddr().String(), ref: fmt.Sprintf("http://127.0.0.1:%d", ns.MonitorAddr().Port)}
	for _, url := range []string{busURL(b), ns.ClientURL()} {
		connect(t, url, nats.UserInfo("ann", "a"), nats.Name("ann1"))
		connect(t, url, nats.UserInfo("bob", "b"), nats.Name("bob1"))
		gone, err := nats.Connect(url, nats.UserInfo("ann", "a"), nats.Name("ann2"))
		if err != nil {
			t.Fatal(err)
		}
		gone.Close()
		if _, err := nats.Connect(url, nats.UserInfo("ann", "wrong"), nats.Name("bad")); err == nil {
			t.Fatal("wrong password accepted")
		}
	}
	for _, base := range []string{p.bus, p.ref} {
		eventually(t, 5e9, func() bool {
			var c struct{ Total int }
			getJSON(t, base+"/connz?state=closed", &c)
			return c.Total == 2
		})
	}
	for _, tc := range []struct{ query, names string }{
		{"?auth=true", "ann1,bob1"},
		{"?auth=true&user=ann", "ann1"},
		{"?auth=true&user=ann&state=all", "ann1,ann2,bad"},
		{"?auth=true&state=closed&sort=reason", "bad,ann2"},
		{"?user=bob", "bob1"},
	} {
		bus, ref := p.fetchBoth(t, "/connz"+tc.query)
		if bn, rn := names(bus), names(ref); bn != tc.names || rn != tc.names {
			t.Errorf("/connz%s: bus %q, reference %q, want %q", tc.query, bn, rn, tc.names)
		}
		sameShape(t, "/connz"+tc.query, bus, ref, nil)
		for i := range 2 {
			sameValues(t, "/connz"+tc.query, bus, ref, fmt.Sprintf("connections.%d.authorized_user", i), fmt.Sprintf("connections.%d.reason", i), fmt.Sprintf("connections.%d.account", i))
		}
	}
}

// sortSubs orders connection i's subscription lists by subject: the
// reference lists them in map order.
func sortSubs(doc any, i int) {
	c, _ := field(doc, fmt.Sprintf("connections.%d", i)).(map[string]any)
	if l, ok := c["subscriptions_list"].([]any); ok {
		slices.SortFunc(l, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	}
	if l, ok := c["subscriptions_list_detail"].([]any); ok {
		slices.SortFunc(l, func(a, b any) int {
			return strings.Compare(fmt.Sprint(field(a, "subject")), fmt.Sprint(field(b, "subject")))
		})
	}
}
