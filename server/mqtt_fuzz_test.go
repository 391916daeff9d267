package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
	"github.com/bus-dev/bus/server/mqtt"
)

// mqttFuzzSeeds are inputs after a good CONNECT: subscriptions with
// wildcards and refused filters, publishes at every QoS that reach them,
// the QoS 2 handshake, acks for nothing, pings, a second CONNECT, the
// reference's advisories' shapes ($MQTT topics, a retained and a DUP
// QoS 1 publish on a denied topic), bad flags and hostile lengths.
func mqttFuzzSeeds() [][]byte {
	cat := func(ps ...[]byte) []byte {
		var out []byte
		for _, p := range ps {
			out = append(out, p...)
		}
		return out
	}
	sub := mqtt.AppendSubscribe(nil, 1, [][]byte{[]byte("a/#"), []byte("+/b"), []byte("$MQTT/sess/#"), []byte("deny/x")}, []byte{0, 1, 2, 0})
	pub := func(qos byte, topic string, id uint16) []byte {
		return mqtt.AppendPublish(nil, &mqtt.Publish{QoS: qos, Topic: []byte(topic), PacketID: id, Payload: []byte("x")})
	}
	return [][]byte{
		cat(sub, pub(0, "a/b", 0), pub(1, "a", 2), pub(2, "x/b", 3), pub(2, "x/b", 3), mqtt.AppendAck(nil, mqtt.PUBREL, 3)),
		cat(sub, mqtt.AppendSubscribe(nil, 4, [][]byte{[]byte("a/#")}, nil), pub(0, "a/b", 0)),
		cat(mqtt.AppendAck(nil, mqtt.PUBACK, 9), mqtt.AppendAck(nil, mqtt.PUBREC, 9), mqtt.AppendAck(nil, mqtt.PUBCOMP, 9)),
		{byte(mqtt.PINGREQ) << 4, 0, byte(mqtt.PINGREQ) << 4, 0, byte(mqtt.DISCONNECT) << 4, 0},
		mqtt.AppendConnect(nil, &mqtt.Connect{CleanSession: true, ClientID: []byte("again")}),
		pub(0, "$MQTT/JSA/x", 0),
		mqtt.AppendPublish(nil, &mqtt.Publish{Retain: true, Topic: []byte("deny/x"), Payload: []byte("r")}),
		mqtt.AppendPublish(nil, &mqtt.Publish{QoS: 1, Dup: true, PacketID: 5, Topic: []byte("deny/x"), Payload: []byte("d")}),
		pub(0, "a/*", 0),
		cat(mqtt.AppendPublish(nil, &mqtt.Publish{Retain: true, Topic: []byte("a/r"), Payload: []byte("kept")}),
			mqtt.AppendPublish(nil, &mqtt.Publish{Retain: true, QoS: 1, PacketID: 6, Topic: []byte("a/r/s"), Payload: []byte("q1")}),
			mqtt.AppendPublish(nil, &mqtt.Publish{Retain: true, Topic: []byte("a/gone")}),
			mqtt.AppendSubscribe(nil, 7, [][]byte{[]byte("#"), []byte("a/+"), []byte("deny/#")}, []byte{0, 0, 0})),
		{0x30, 0xff, 0xff, 0xff, 0x7f},
		{0x36, 0},
		{0x82, 2, 0, 1},
		{byte(mqtt.CONNACK) << 4, 2, 0, 0},
	}
}

// FuzzMQTTInput sends any bytes to a live MQTT listener with JetStream
// (so QoS 1 and persistent sessions are stored), before CONNECT or after
// a good one, then half-closes: the server must neither panic nor hang,
// and must hang up.
func FuzzMQTTInput(f *testing.F) {
	for _, s := range mqttFuzzSeeds() {
		f.Add(true, s)
	}
	f.Add(false, mqtt.AppendConnect(nil, &mqtt.Connect{CleanSession: true, ClientID: []byte("c"), HasUsername: true, Username: []byte("a"),
		HasPassword: true, Password: []byte("wrong")}))
	f.Add(false, mqtt.AppendConnect(nil, &mqtt.Connect{Level: 3, ClientID: []byte("old")}))
	f.Add(false, mqtt.AppendConnect(nil, &mqtt.Connect{CleanSession: true, HasWill: true, WillTopic: []byte("w/t"), WillMessage: []byte("bye")}))
	f.Add(false, []byte("CONNECT {}\r\n"))
	f.Add(false, append(mqtt.AppendConnect(nil, &mqtt.Connect{ClientID: []byte("kept"), HasUsername: true, Username: []byte("a"),
		HasPassword: true, Password: []byte("b")}), mqttFuzzSeeds()[0]...))

	s, err := New(Options{Host: "127.0.0.1", MaxPayload: 4 << 10,
		Authorization: Authorization{Users: []User{{Name: "a", Password: "b", Permissions: &Permissions{
			Publish:   &SubjectPermission{Deny: []string{"deny.>"}},
			Subscribe: &SubjectPermission{Deny: []string{"deny.>"}},
		}}}, NoAuthUser: "a", Timeout: time.Second},
		MQTT: MQTTOptions{Port: -1, Host: "127.0.0.1"},
		// QoS 1 and sessions are stored, in memory: what is fuzzed is the
		// listener, not the disk (fsyncs would slow it twenty-fold).
		JetStream: true, StoreDir: f.TempDir(), StoreFS: vfs.NewVolatileMemFS()})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Start(); err != nil {
		f.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			f.Error(err)
		}
	}()
	addr := s.MQTTAddr().String()
	connect := mqtt.AppendConnect(nil, &mqtt.Connect{CleanSession: true, KeepAlive: 5, ClientID: []byte("fuzz"),
		HasWill: true, WillTopic: []byte("a/will"), WillMessage: []byte("gone"),
		HasUsername: true, Username: []byte("a"), HasPassword: true, Password: []byte("b")})
	f.Fuzz(func(t *testing.T, connected bool, in []byte) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(nc)
		if connected {
			_, _ = nc.Write(connect)
			ack := make([]byte, 4)
			if _, err := io.ReadFull(r, ack); err != nil || ack[3] != 0 {
				t.Fatalf("CONNACK %x: %v", ack, err)
			}
		}
		_, _ = nc.Write(in) // the server may hang up first
		_ = nc.(*net.TCPConn).CloseWrite()
		if _, err := io.Copy(io.Discard, r); err != nil && !isReset(err) {
			t.Fatalf("server did not hang up: %v", err)
		}
	})
}
