package tests

import (
	"fmt"
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
