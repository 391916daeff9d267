package tests

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/server/mqtt"
)

// TestMQTTClientsInMonitoring: an MQTT client is in /connz as type mqtt
// with its client id (mqtt_client), and /varz's mqtt section has the
// listener's port.
func TestMQTTClientsInMonitoring(t *testing.T) {
	s, tg := startBusMQTT(t, server.Options{})
	mustPaho(t, pahoOptions(tg.mqtt, "sensor-7"))
	cz, err := s.Connz(server.ConnzOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cz.Conns) != 1 || cz.Conns[0].MQTTClient != "sensor-7" || cz.Conns[0].Type != "mqtt" {
		t.Fatalf("connz: %+v", cz.Conns)
	}
	mustPaho(t, pahoOptions(tg.mqtt, "sensor-8"))
	connect(t, tg.nats)
	if cz, err = s.Connz(server.ConnzOptions{MQTTClient: "sensor-8"}); err != nil || len(cz.Conns) != 1 || cz.Conns[0].MQTTClient != "sensor-8" {
		t.Fatalf("connz mqtt_client=sensor-8: %+v %v", cz, err)
	}
	v := s.Varz()
	if v.MQTT.Port != s.MQTTAddr().(*net.TCPAddr).Port || v.MQTT.Host != "127.0.0.1" {
		t.Fatalf("varz mqtt: %+v", v.MQTT)
	}
}

// TestMQTTAuthTimeout: a socket that sends no CONNECT is closed after
// the auth timeout, as on the client port.
func TestMQTTAuthTimeout(t *testing.T) {
	_, tg := startBusMQTT(t, server.Options{Authorization: server.Authorization{
		User: "u", Password: "p", Timeout: 200 * time.Millisecond}})
	nc, err := net.Dial("tcp", strings.TrimPrefix(tg.mqtt, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := io.ReadAll(nc); err != nil {
		t.Fatalf("want the server to close the socket, got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("closed after %v", d)
	}
}

// TestMQTTMaxConnections: past max_connections an MQTT client is turned
// away (no CONNACK), and the NATS clients' limit is the same one.
func TestMQTTMaxConnections(t *testing.T) {
	_, tg := startBusMQTT(t, server.Options{MaxConnections: 1})
	mustPaho(t, pahoOptions(tg.mqtt, "one"))
	if c, code := pahoConnect(t, pahoOptions(tg.mqtt, "two")); c != nil || code == mqtt.ConnAccepted {
		t.Fatalf("second connection accepted (code %#x)", code)
	}
}

// TestMQTTProtocolRefusals: what the listener refuses on the wire, each
// on a fresh connection: the CONNACK code, or 0xff for a close without
// one.
func TestMQTTProtocolRefusals(t *testing.T) {
	_, tg := startBusMQTT(t, server.Options{MQTT: server.MQTTOptions{RejectQoS2Publish: true}})
	base := func() *mqtt.Connect { return &mqtt.Connect{CleanSession: true, ClientID: []byte("r")} }
	cases := []struct {
		name string
		c    func() *mqtt.Connect
		want byte
	}{
		{"level 5", func() *mqtt.Connect { c := base(); c.Level = 5; return c }, mqtt.ConnBadProtocolLevel},
		{"persistent session", func() *mqtt.Connect { c := base(); c.CleanSession = false; return c }, mqtt.ConnServerUnavailable},
		{"empty id without clean session", func() *mqtt.Connect { return &mqtt.Connect{} }, mqtt.ConnIdentifierRejected},
		{"retained will without JetStream", func() *mqtt.Connect {
			c := base()
			c.HasWill, c.WillRetain, c.WillTopic = true, true, []byte("w")
			return c
		}, mqtt.ConnServerUnavailable},
		{"qos 2 will", func() *mqtt.Connect {
			c := base()
			c.HasWill, c.WillQoS, c.WillTopic = true, 2, []byte("w")
			return c
		}, mqtt.ConnQoS2WillRejected},
		{"will topic in $MQTT", func() *mqtt.Connect {
			c := base()
			c.HasWill, c.WillTopic = true, []byte("$MQTT/sess/x")
			return c
		}, 0xff},
	}
	for _, tc := range cases {
		if _, code := dialMQTT(t, tg.mqtt, tc.c()); code != tc.want {
			t.Errorf("%s: code %#x, want %#x", tc.name, code, tc.want)
		}
	}
	// After CONNECT: a retained PUBLISH without JetStream (nowhere to
	// keep it) or a QoS 2 one closes the connection.
	for name, pub := range map[string]*mqtt.Publish{
		"retained without JetStream": {Retain: true, Topic: []byte("a"), Payload: []byte("x")},
		"qos 2":                      {QoS: 2, PacketID: 1, Topic: []byte("a"), Payload: []byte("x")},
		"$MQTT":                      {Topic: []byte("$MQTT/JSA/x"), Payload: []byte("x")},
	} {
		rc, code := dialMQTT(t, tg.mqtt, base())
		if code != 0 {
			t.Fatalf("connect: %#x", code)
		}
		if _, err := rc.nc.Write(mqtt.AppendPublish(nil, pub)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := rc.r.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("%s PUBLISH: %v, want the connection closed", name, err)
		}
	}
}

// TestMQTTKeepalive: a client silent for 1.5 × its keepalive is closed;
// PINGREQ gets PINGRESP.
func TestMQTTKeepalive(t *testing.T) {
	_, tg := startBusMQTT(t, server.Options{})
	rc, code := dialMQTT(t, tg.mqtt, &mqtt.Connect{CleanSession: true, KeepAlive: 1, ClientID: []byte("k")})
	if code != 0 {
		t.Fatalf("connect: %#x", code)
	}
	if _, err := rc.nc.Write([]byte{byte(mqtt.PINGREQ) << 4, 0}); err != nil {
		t.Fatal(err)
	}
	if h, _, err := rc.r.Next(); err != nil || h.Type != mqtt.PINGRESP {
		t.Fatalf("PINGREQ: %v %v", h.Type, err)
	}
	start := time.Now()
	if _, _, err := rc.r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("silent client: %v, want closed", err)
	}
	if d := time.Since(start); d < time.Second || d > 4*time.Second {
		t.Fatalf("closed after %v, want about 1.5s", d)
	}
}

// TestMQTTAdvisoryShapes holds the permission side of the reference's
// MQTT advisories (docs/mqtt.md, "Advisories"): GHSA-7qmq-8cc4-hxwg, a
// "#" subscriber receiving topics its deny rules forbid; CVE-2026-33217,
// clients reaching the $MQTT namespace.
func TestMQTTAdvisoryShapes(t *testing.T) {
	auth := server.Authorization{Users: []server.User{
		{Name: "dev", Password: "pw", Permissions: &server.Permissions{Subscribe: &server.SubjectPermission{Deny: []string{"secret.>"}}}},
		{Name: "svc", Password: "svc"},
	}}
	_, tg := startBusMQTT(t, server.Options{Authorization: auth})
	c := mustPaho(t, pahoOptions(tg.mqtt, "adv").SetUsername("dev").SetPassword("pw"))
	all, code := mqttSubscribe(t, c, "#")
	if code != 0 {
		t.Fatalf("# refused: %#x", code)
	}
	if _, code := mqttSubscribe(t, c, "$MQTT/sess/#"); code != mqtt.SubackFailure {
		t.Fatalf("$MQTT/sess/# granted: %#x", code)
	}
	nc := connect(t, tg.nats, nats.UserInfo("svc", "svc"))
	// [MQTT-4.7.2-1]: "#" does not match topics starting with '$'.
	for _, s := range []string{"secret.x", "$dev.x", "public.x"} {
		if err := nc.Publish(s, []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	if got := recv(all, 5*time.Second); got != "public/x m" {
		t.Fatalf("# subscriber got %q first, want public/x m", got)
	}
	if got := recv(all, 300*time.Millisecond); got != "" {
		t.Fatalf("then %q", got)
	}
}

// TestMQTTOverTLS: with the block's tls, an MQTT client connects over
// TLS (ssl://) and shows its TLS version in /connz; a plain one does not
// get a CONNACK.
func TestMQTTOverTLS(t *testing.T) {
	ca := newTestCA(t, "mqtt")
	cert, key := ca.serverCert(t)
	s, tg := startBusMQTT(t, server.Options{MQTT: server.MQTTOptions{TLS: server.TLSOptions{CertFile: cert, KeyFile: key}}})
	addr := strings.Replace(tg.mqtt, "tcp://", "ssl://", 1)
	c := mustPaho(t, pahoOptions(addr, "secure").SetTLSConfig(clientTLS(t, ca, "", "")))
	msgs, _ := mqttSubscribe(t, c, "s/x")
	waitToken(t, "publish", c.Publish("s/x", 0, false, "tls"))
	if got := recv(msgs, 5*time.Second); got != "s/x tls" {
		t.Fatalf("got %q", got)
	}
	cz, err := s.Connz(server.ConnzOptions{MQTTClient: "secure"})
	if err != nil || len(cz.Conns) != 1 || cz.Conns[0].TLSVersion == "" {
		t.Fatalf("connz: %+v %v", cz, err)
	}
	if plain, code := pahoConnect(t, pahoOptions(tg.mqtt, "plain")); plain != nil || code == mqtt.ConnAccepted {
		t.Fatalf("a plain client got CONNACK %#x", code)
	}
}

// TestMQTTReloadAuthorization: a reload that removes an MQTT client's
// user closes it; the mqtt block itself takes no reload.
func TestMQTTReloadAuthorization(t *testing.T) {
	opts := server.Options{StoreDir: t.TempDir(), Authorization: server.Authorization{Users: []server.User{{Name: "dev", Password: "pw"}, {Name: "keep", Password: "k"}}}}
	s, tg := startBusMQTT(t, opts)
	lost := make(chan struct{}, 1)
	mustPaho(t, pahoOptions(tg.mqtt, "rl").SetUsername("dev").SetPassword("pw").
		SetConnectionLostHandler(func(paho.Client, error) { lost <- struct{}{} }))
	opts.Host, opts.MQTT = "127.0.0.1", server.MQTTOptions{Host: "127.0.0.1", Port: -1}
	opts.Authorization.Users = opts.Authorization.Users[1:]
	if err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("the removed user's MQTT client is still connected")
	}
	opts.MQTT.NoAuthUser = "keep"
	if err := s.Reload(opts); err == nil || !strings.Contains(err.Error(), "mqtt") {
		t.Fatalf("reloading the mqtt block: %v, want it refused naming mqtt", err)
	}
}

// TestMQTTConnzMatchesReference: an MQTT client's /connz entry has the
// reference's kind, type, mqtt_client, name and lang.
func TestMQTTConnzMatchesReference(t *testing.T) {
	s, tg := startBusMQTT(t, server.Options{})
	port := freePort(t)
	ns := startReferenceServer(t, &natsserver.Options{Host: "127.0.0.1", Port: -1, ServerName: "ref-connz", NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir(), MQTT: natsserver.MQTTOpts{Host: "127.0.0.1", Port: port}})
	mustPaho(t, pahoOptions(tg.mqtt, "meter-1"))
	mustPaho(t, pahoOptions(fmt.Sprintf("tcp://127.0.0.1:%d", port), "meter-1"))
	cz, err := s.Connz(server.ConnzOptions{})
	if err != nil || len(cz.Conns) != 1 {
		t.Fatalf("bus connz: %+v %v", cz, err)
	}
	rz, err := ns.Connz(&natsserver.ConnzOptions{MQTTClient: "meter-1"})
	if err != nil || len(rz.Conns) != 1 {
		t.Fatalf("reference connz: %+v %v", rz, err)
	}
	b, r := cz.Conns[0], rz.Conns[0]
	got := fmt.Sprintf("%s %s %s %q %q", b.Kind, b.Type, b.MQTTClient, b.Name, b.Lang)
	want := fmt.Sprintf("%s %s %s %q %q", r.Kind, r.Type, r.MQTTClient, r.Name, r.Lang)
	if got != want {
		t.Errorf("bus %s, reference %s", got, want)
	}
}

// TestMQTTOverWebSocket: with an mqtt block, MQTT clients reach the
// websocket listener at /mqtt (connection type MQTT_WS) and meet the
// others; a user allowed only MQTT is refused there.
func TestMQTTOverWebSocket(t *testing.T) {
	auth := server.Authorization{Users: []server.User{
		{Name: "ws", Password: "pw", AllowedConnectionTypes: []string{"MQTT_WS"}},
		{Name: "tcp", Password: "pw", AllowedConnectionTypes: []string{"MQTT"}},
	}}
	s, tg := startBusMQTT(t, server.Options{Authorization: auth,
		WebSocket: server.WebSocketOptions{Host: "127.0.0.1", Port: -1, NoTLS: true}})
	wsURL := "ws://" + s.WebSocketAddr().String() + "/mqtt"
	viaWS := mustPaho(t, pahoOptions(wsURL, "over-ws").SetUsername("ws").SetPassword("pw"))
	viaTCP := mustPaho(t, pahoOptions(tg.mqtt, "over-tcp").SetUsername("tcp").SetPassword("pw"))
	msgs, _ := mqttSubscribe(t, viaWS, "w/+")
	waitToken(t, "publish", viaTCP.Publish("w/1", 0, false, "hi"))
	if got := recv(msgs, 5*time.Second); got != "w/1 hi" {
		t.Fatalf("over WebSocket got %q", got)
	}
	if c, code := pahoConnect(t, pahoOptions(wsURL, "wrong-type").SetUsername("tcp").SetPassword("pw")); c != nil || code != mqtt.ConnNotAuthorized {
		t.Fatalf("an MQTT-only user over WebSocket: code %#x", code)
	}
}
