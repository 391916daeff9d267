package tests

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/server/mqtt"
)

// startMQTTPairJS is startMQTTPair with JetStream on in bus too (QoS 1
// and sessions are stored there) and the mqtt block's storage keys
// given to both.
func startMQTTPairJS(t *testing.T, auth server.Authorization, mq server.MQTTOptions) []mqttTarget {
	t.Helper()
	_, bus := startBusMQTT(t, server.Options{Authorization: auth, MQTT: mq, JetStream: true, StoreDir: t.TempDir()})
	ro := refOptions(auth)
	ro.ServerName, ro.JetStream, ro.StoreDir = "ref-mqtt", true, t.TempDir()
	port := freePort(t)
	ro.MQTT = natsserver.MQTTOpts{
		Host: "127.0.0.1", Port: port, NoAuthUser: mq.NoAuthUser,
		Username: mq.Authorization.User, Password: mq.Authorization.Password, Token: mq.Authorization.Token,
		AuthTimeout: mq.Authorization.Timeout.Seconds(), AckWait: mq.AckWait, MaxAckPending: uint16(mq.MaxAckPending),
	}
	ns := startReferenceServer(t, ro)
	return []mqttTarget{bus, {name: "reference", nats: "nats://" + refAddr(ns), mqtt: fmt.Sprintf("tcp://127.0.0.1:%d", port)}}
}

// mqttSubscribeQoS subscribes c to filter at qos and returns its
// messages as "topic payload qos=N" and SUBACK's granted code.
func mqttSubscribeQoS(t *testing.T, c paho.Client, filter string, qos byte) (<-chan string, byte) {
	t.Helper()
	ch := make(chan string, 256)
	tok := c.Subscribe(filter, qos, func(_ paho.Client, m paho.Message) {
		ch <- fmt.Sprintf("%s %s qos=%d", m.Topic(), m.Payload(), m.Qos())
	})
	waitToken(t, "subscribe "+filter, tok)
	return ch, tok.(*paho.SubscribeToken).Result()[filter]
}

// persistentOptions are a paho client's options with clean session 0.
func persistentOptions(addr, id string) *paho.ClientOptions {
	return pahoOptions(addr, id).SetCleanSession(false)
}

// sessionPresent connects with o and returns the client and CONNACK's
// session present flag. A connection closed before CONNACK is tried
// again for a while: right after a DISCONNECT the reference may still
// be closing the session and refuse the id meanwhile.
func sessionPresent(t *testing.T, o *paho.ClientOptions) (paho.Client, bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := paho.NewClient(o)
		tok := c.Connect()
		if tok.WaitTimeout(10*time.Second) && tok.Error() == nil {
			t.Cleanup(func() { c.Disconnect(0) })
			return c, tok.(*paho.ConnectToken).SessionPresent()
		}
		if time.Now().After(deadline) {
			t.Fatalf("MQTT connect: %v", tok.Error())
		}
		time.Sleep(100 * time.Millisecond) // poll interval
	}
}

// next is the next packet of a raw connection, failing the test on a
// read error.
func (r *rawMQTT) next(t *testing.T, d time.Duration) (mqtt.Header, []byte, bool) {
	t.Helper()
	_ = r.nc.SetReadDeadline(time.Now().Add(d))
	h, body, err := r.r.Next()
	if err != nil {
		return mqtt.Header{}, nil, false
	}
	return h, append([]byte(nil), body...), true
}

// send writes one packet on a raw connection.
func (r *rawMQTT) send(t *testing.T, pkt []byte) {
	t.Helper()
	if _, err := r.nc.Write(pkt); err != nil {
		t.Fatal(err)
	}
}

// dialMQTTSession is dialMQTT that also returns CONNACK's session
// present flag.
func dialMQTTSession(t *testing.T, broker string, c *mqtt.Connect) (*rawMQTT, bool, byte) {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(broker, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write(mqtt.AppendConnect(nil, c)); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := mqtt.NewReader(bufio.NewReader(nc), 1<<20)
	h, body, err := r.Next()
	if err != nil || h.Type != mqtt.CONNACK || len(body) != 2 {
		return &rawMQTT{nc: nc, r: r}, false, 0xff
	}
	return &rawMQTT{nc: nc, r: r}, body[0]&1 == 1, body[1]
}

// nextPublish is the next PUBLISH of a raw connection (other packets
// skipped); ok is false when none comes within d.
func (r *rawMQTT) nextPublish(t *testing.T, d time.Duration) (p mqtt.Publish, ok bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		h, body, ok := r.next(t, time.Until(deadline))
		if !ok {
			return p, false
		}
		if h.Type == mqtt.PUBLISH && mqtt.DecodePublish(h.Flags, body, &p) == nil {
			return p, true
		}
	}
	return p, false
}
