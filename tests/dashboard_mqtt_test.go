package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// startDashboardMQTT runs bus with monitoring, an MQTT listener and a
// WebSocket one, with an MQTT device (client id sensor-7), a NATS
// client over TCP (orders-svc) and one over WebSocket (browser-app).
func startDashboardMQTT(t *testing.T) dash {
	t.Helper()
	s, tg := startBusMQTT(t, server.Options{HTTPPort: -1,
		WebSocket: server.WebSocketOptions{Host: "127.0.0.1", Port: -1, NoTLS: true}})
	mustPaho(t, pahoOptions(tg.mqtt, "sensor-7"))
	connect(t, tg.nats, nats.Name("orders-svc"))
	connect(t, "ws://"+s.WebSocketAddr().String(), nats.Name("browser-app"))
	return dash{t, "http://" + s.HTTPAddr().String()}
}

// The state document lists each connection with the type /connz gives
// it and an MQTT client's client id, and counts MQTT and WebSocket
// clients apart.
func TestDashboardStateShowsConnectionTypes(t *testing.T) {
	t.Parallel()
	d := startDashboardMQTT(t)
	var st struct {
		Server struct {
			Connections          int `json:"connections"`
			MQTTConnections      int `json:"mqtt_connections"`
			WebSocketConnections int `json:"websocket_connections"`
		} `json:"server"`
		Connections []struct {
			Type       string `json:"type"`
			Name       string `json:"name"`
			MQTTClient string `json:"mqtt_client"`
			IP         string `json:"ip"`
			Port       int    `json:"port"`
		} `json:"connections"`
	}
	d.getJSON("/dashboard/api/state", &st)
	if s := st.Server; s.Connections != 3 || s.MQTTConnections != 1 || s.WebSocketConnections != 1 {
		t.Errorf("server %+v", s)
	}
	got := map[string]string{} // who -> type
	for _, c := range st.Connections {
		if c.IP != "127.0.0.1" || c.Port == 0 {
			t.Errorf("connection address %s:%d", c.IP, c.Port)
		}
		got[c.Name+c.MQTTClient] = c.Type
	}
	want := map[string]string{"sensor-7": "mqtt", "orders-svc": "nats", "browser-app": "websocket"}
	if len(got) != len(want) || got["sensor-7"] != "mqtt" || got["orders-svc"] != "nats" || got["browser-app"] != "websocket" {
		t.Errorf("connections by who and type %v, want %v", got, want)
	}
}

// The overview's connection table shows the MQTT device by its client
// id with its type, beside the NATS clients.
func TestDashboardInBrowserShowsMQTTClients(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	d := startDashboardMQTT(t)
	do(t, ctx, "overview", chromedp.Navigate(d.base+"/#overview"),
		chromedp.WaitVisible(chromedp.CSS(`#conns-table tr td.conn-who code`)))
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(`#conns-table table`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mqtt", "sensor-7", "nats", "orders-svc", "websocket", "browser-app", "Client id / name"} {
		if !strings.Contains(text, want) {
			t.Errorf("connection table lacks %q: %s", want, text)
		}
	}
	cards, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(`#overview-cards`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cards, "1 MQTT") || !strings.Contains(cards, "1 WebSocket") {
		t.Errorf("connections card: %s", cards)
	}
}
