package tests

import (
	"fmt"
	"net"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// mqttTarget is one server with an MQTT listener: its NATS URL and
// its MQTT broker address (tcp://host:port).
type mqttTarget struct {
	name       string
	nats, mqtt string
}

// freePort is a loopback port free a moment ago, for the reference's
// MQTT listener, which does not report the port it picked for -1.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startBusMQTT runs bus with an MQTT listener on a free port.
func startBusMQTT(t testing.TB, opts server.Options) (*server.Server, mqttTarget) {
	t.Helper()
	opts.MQTT.Host = "127.0.0.1"
	if opts.MQTT.Port == 0 {
		opts.MQTT.Port = -1
	}
	s := startBus(t, opts)
	return s, mqttTarget{name: "bus", nats: busURL(s), mqtt: "tcp://" + s.MQTTAddr().String()}
}

// startMQTTPair runs bus and the reference with the same authorization
// and mqtt block (the reference's MQTT needs JetStream and a server
// name), bus first.
func startMQTTPair(t *testing.T, auth server.Authorization, mq server.MQTTOptions) []mqttTarget {
	t.Helper()
	_, bus := startBusMQTT(t, server.Options{Authorization: auth, MQTT: mq})
	ro := refOptions(auth)
	ro.ServerName, ro.JetStream, ro.StoreDir = "ref-mqtt", true, t.TempDir()
	port := freePort(t)
	ro.MQTT = natsserver.MQTTOpts{
		Host: "127.0.0.1", Port: port, NoAuthUser: mq.NoAuthUser,
		Username: mq.Authorization.User, Password: mq.Authorization.Password, Token: mq.Authorization.Token,
		AuthTimeout: mq.Authorization.Timeout.Seconds(),
	}
	ns := startReferenceServer(t, ro)
	return []mqttTarget{bus, {name: "reference", nats: "nats://" + refAddr(ns), mqtt: fmt.Sprintf("tcp://127.0.0.1:%d", port)}}
}

// pahoOptions are a clean-session client's options without retries, so
// that a refusal is seen as it is.
func pahoOptions(addr, id string) *paho.ClientOptions {
	return paho.NewClientOptions().AddBroker(addr).SetClientID(id).SetCleanSession(true).SetProtocolVersion(4).
		SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(5 * time.Second)
}

// pahoConnect connects with o and returns the client and CONNACK's
// return code; a refused client is not kept.
func pahoConnect(t *testing.T, o *paho.ClientOptions) (paho.Client, byte) {
	t.Helper()
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		t.Fatalf("MQTT connect: no CONNACK in time")
	}
	code := tok.(*paho.ConnectToken).ReturnCode()
	if tok.Error() != nil {
		return nil, code
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c, code
}

// mustPaho connects or fails the test.
func mustPaho(t *testing.T, o *paho.ClientOptions) paho.Client {
	t.Helper()
	c, code := pahoConnect(t, o)
	if c == nil {
		t.Fatalf("MQTT connect refused with code %#x", code)
	}
	return c
}

// waitToken waits for a paho token and fails the test on its error.
func waitToken(t *testing.T, what string, tok paho.Token) {
	t.Helper()
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("%s: %v", what, tok.Error())
	}
}

// mqttSubscribe subscribes c to filter and returns its messages as
// "topic payload" and SUBACK's granted code.
func mqttSubscribe(t *testing.T, c paho.Client, filter string) (<-chan string, byte) {
	t.Helper()
	ch := make(chan string, 64)
	tok := c.Subscribe(filter, 0, func(_ paho.Client, m paho.Message) { ch <- m.Topic() + " " + string(m.Payload()) })
	waitToken(t, "subscribe "+filter, tok)
	return ch, tok.(*paho.SubscribeToken).Result()[filter]
}

// recv is the next message of ch, or "" when none comes within d.
func recv(ch <-chan string, d time.Duration) string {
	select {
	case m := <-ch:
		return m
	case <-time.After(d):
		return ""
	}
}
