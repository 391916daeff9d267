package tests

import (
	"fmt"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// /varz against the reference after the same scenario: every field the
// exporter, NUI and nats-top read is there with the reference's type, and
// the deterministic ones have its value.
func TestMonitorVarzMatchesReference(t *testing.T) {
	t.Parallel()
	p := startMonitorPair(t)
	for range 2 { // http_req_stats counts these
		p.fetchBoth(t, "/varz")
	}
	bus, ref := p.fetchBoth(t, "/varz")
	sameShape(t, "/varz", bus, ref, map[string]string{
		"feature_flags":                  "the reference's own feature switches",
		"disk_io_wait_stats":             "the reference's disk semaphore; bus has none",
		"system_account":                 "bus has no system account yet (security issue)",
		"jetstream.config.sync_interval": "bus syncs per stream (x_bus_durability)",
		"jetstream.config.strict":        "bus always parses the API strictly",
	})
	sameValues(t, "/varz", bus, ref,
		"proto", "host", "max_connections", "ping_interval", "ping_max", "http_host", "http_base_path",
		"https_port", "auth_timeout", "max_control_line", "max_payload", "max_pending", "tls_timeout",
		"write_deadline", "connections", "total_connections", "routes", "remotes", "leafnodes",
		"slow_consumers", "stale_connections", "stalled_clients", "cluster", "gateway", "leaf", "mqtt", "websocket",
		"slow_consumer_stats", "stale_connection_stats", "http_req_stats./varz", "jetstream.stats.accounts",
		"jetstream.stats.ha_assets", "cores", "gomaxprocs", "config_digest",
	)
	if fmt.Sprint(field(bus, "max_subscriptions")) != "<nil>" {
		t.Errorf("/varz max_subscriptions %v: left out when unlimited, as by the reference", field(bus, "max_subscriptions"))
	}
	for _, path := range []string{"in_msgs", "out_msgs", "in_client_msgs", "subscriptions", "mem", "jetstream.config.max_memory", "jetstream.config.max_storage", "jetstream.stats.storage"} {
		if n, _ := field(bus, path).(float64); n <= 0 {
			t.Errorf("/varz %s = %v, want > 0", path, field(bus, path))
		}
	}
	if b, r := field(bus, "in_msgs"), field(bus, "in_client_msgs"); b != r {
		t.Errorf("/varz in_msgs %v, in_client_msgs %v: every connection is a client", b, r)
	}
	p.decodesAsReference(t, "/varz", &natsserver.Varz{})
}

// Without JetStream, /varz has an empty jetstream block as the reference
// has, and /jsz says disabled.
func TestMonitorVarzWithoutJetStream(t *testing.T) {
	t.Parallel()
	b := startBusMonitored(t)
	r := startReference(t, false)
	rm := fmt.Sprintf("http://127.0.0.1:%d", r.MonitorAddr().Port)
	p := &monitorPair{bus: b, ref: rm}
	bus, ref := p.fetchBoth(t, "/varz")
	sameValues(t, "/varz", bus, ref, "jetstream")
	bus, ref = p.fetchBoth(t, "/jsz")
	sameValues(t, "/jsz", bus, ref, "disabled", "streams", "consumers", "total")
	sameShape(t, "/jsz disabled", bus, ref, map[string]string{"config": "bus writes an empty config"}, "config", "x_bus_dead_lettered", "x_bus_dead_letters_lost")
}
