package tests

import (
	"net/http"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// /jsz against the reference with each query prometheus-nats-exporter
// sends, on the same stream and consumer: the shape it walks
// (account_details → stream_detail → consumer_detail) and the numbers it
// turns into jetstream_* series.
func TestMonitorJszMatchesReference(t *testing.T) {
	t.Parallel()
	p := startMonitorPair(t)
	notServed := map[string]string{
		"config.sync_interval": "bus syncs per stream (x_bus_durability)",
		"config.strict":        "bus always parses the API strictly",
		"account_details[].stream_detail[].config.allow_msg_ttl": "bus has no per-message TTL",
	}
	top := []string{"disabled", "streams", "streams_leader", "consumers", "consumers_leader", "messages", "total", "accounts", "ha_assets", "reserved_memory", "reserved_storage", "memory"}
	for _, tc := range []struct {
		query    string
		accounts int // account_details
		streams  bool
		detail   bool // consumers and config
	}{
		{"", 0, false, false},
		{"?accounts=true", 1, false, false},                      // -jsz=accounts
		{"?streams=true", 1, true, false},                        // -jsz=streams
		{"?consumers=true&config=true&raft=true", 1, true, true}, // -jsz=consumers, all
		{"?acc=$G&streams=true", 1, true, false},
		{"?accounts=true&offset=1", 0, false, false},
		{"?acc=nobody", 0, false, false},
		{"?leader-only=true&stream-leader-only=true", 0, false, false},
	} {
		bus, ref := p.fetchBoth(t, "/jsz"+tc.query)
		sameShape(t, "/jsz"+tc.query, bus, ref, notServed)
		sameValues(t, "/jsz"+tc.query, bus, ref, top...)
		if n := len(asList(field(bus, "account_details"))); n != tc.accounts {
			t.Errorf("/jsz%s: %d account_details, want %d", tc.query, n, tc.accounts)
		}
		if tc.accounts == 0 {
			continue
		}
		sameValues(t, "/jsz"+tc.query, bus, ref, "account_details.0.name", "account_details.0.id", "account_details.0.memory",
			"account_details.0.reserved_memory", "account_details.0.reserved_storage", "account_details.0.api.total")
		if !tc.streams {
			continue
		}
		st := "account_details.0.stream_detail.0."
		sameValues(t, "/jsz"+tc.query, bus, ref, st+"name", st+"state.messages", st+"state.first_seq", st+"state.last_seq",
			st+"state.num_subjects", st+"state.consumer_count", st+"state.num_deleted")
		if !tc.detail && (field(bus, st+"config") != nil || field(bus, st+"consumer_detail") != nil) {
			t.Errorf("/jsz%s: config or consumers without asking", tc.query)
		}
		if field(bus, st+"cluster.leader") == nil {
			t.Errorf("/jsz%s: no stream cluster leader (the exporter labels with it)", tc.query)
		}
		if !tc.detail {
			continue
		}
		c := st + "consumer_detail.0."
		sameValues(t, "/jsz"+tc.query, bus, ref, st+"config.name", st+"config.subjects", st+"config.max_msgs", st+"config.max_bytes",
			st+"config.storage", st+"config.retention", c+"stream_name", c+"name", c+"num_pending", c+"num_ack_pending",
			c+"num_redelivered", c+"num_waiting", c+"delivered", c+"ack_floor", c+"config.durable_name", c+"config.ack_policy",
			c+"config.description")
	}
	for _, q := range []string{"accounts=maybe", "limit=x", "offset=y", "consumers=2"} {
		bc, _ := fetch(t, p.bus+"/jsz?"+q)
		rc, _ := fetch(t, p.ref+"/jsz?"+q)
		if bc != rc || bc != http.StatusBadRequest {
			t.Errorf("/jsz?%s: bus %d, reference %d", q, bc, rc)
		}
	}
	p.decodesAsReference(t, "/jsz?consumers=true&config=true&raft=true", &natsserver.JSInfo{})
}

// /healthz and its parameters against the reference.
func TestMonitorHealthzMatchesReference(t *testing.T) {
	t.Parallel()
	p := startMonitorPair(t)
	for _, q := range []string{"", "?js-enabled-only=true", "?js-server-only=true", "?details=true", "?js-enabled=true"} {
		bc, _ := fetch(t, p.bus+"/healthz"+q)
		rc, _ := fetch(t, p.ref+"/healthz"+q)
		if bc != rc {
			t.Errorf("/healthz%s: bus %d, reference %d", q, bc, rc)
		}
		bus, ref := p.fetchBoth(t, "/healthz"+q)
		if keys(bus) != keys(ref) {
			t.Errorf("/healthz%s: bus has %q, reference %q", q, keys(bus), keys(ref))
		}
		sameValues(t, "/healthz"+q, bus, ref, "status", "error", "errors")
	}
	for _, q := range []string{"details=x", "js-enabled-only=x"} {
		bc, _ := fetch(t, p.bus+"/healthz?"+q)
		rc, _ := fetch(t, p.ref+"/healthz?"+q)
		if bc != rc {
			t.Errorf("/healthz?%s: bus %d, reference %d", q, bc, rc)
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }
