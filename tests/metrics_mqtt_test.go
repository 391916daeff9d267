package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// MQTT clients are counted in bus_mqtt_connections and in
// bus_connections; one over WebSocket also in bus_websocket_connections,
// as the transport it came by. The gauge falls when a client leaves.
func TestMetricsCountMQTTConnections(t *testing.T) {
	t.Parallel()
	s, tg := startBusMQTT(t, server.Options{HTTPPort: -1,
		WebSocket: server.WebSocketOptions{Host: "127.0.0.1", Port: -1, NoTLS: true}})
	ws := "ws://" + s.WebSocketAddr().String()
	overTCP := mustPaho(t, pahoOptions(tg.mqtt, "sensor-tcp"))
	mustPaho(t, pahoOptions(ws+"/mqtt", "sensor-ws"))
	connect(t, tg.nats, nats.Name("nats-tcp"))
	connect(t, ws, nats.Name("nats-ws"))

	sc := scrapeMetrics(t, s)
	id := "server_id=" + s.ID()
	for name, want := range map[string]float64{"bus_connections": 4, "bus_mqtt_connections": 2, "bus_websocket_connections": 2} {
		if got := sc.value(t, name, id); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if f := sc["bus_mqtt_connections"]; f.GetType().String() != "GAUGE" {
		t.Errorf("bus_mqtt_connections is a %s", f.GetType())
	}

	overTCP.Disconnect(0)
	eventually(t, 5*time.Second, func() bool {
		sc := scrapeMetrics(t, s)
		return sc.value(t, "bus_mqtt_connections", id) == 1 && sc.value(t, "bus_connections", id) == 3
	})
	if got := scrapeMetrics(t, s).value(t, "bus_websocket_connections", id); got != 2 {
		t.Errorf("bus_websocket_connections = %v after the MQTT client over TCP left, want 2", got)
	}
}
