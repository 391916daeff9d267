package tests

import (
	"fmt"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/server/mqtt"
)

// BenchmarkMQTTQoS1Publish: one MQTT client publishes QoS 1 messages in
// windows of mqttQoS1Window and waits for every PUBACK, which bus sends
// once the message is fsynced in $MQTT_msgs (one QoS 1 subscriber's
// consumer keeps it there), side by side with the reference's MQTT.
func BenchmarkMQTTQoS1Publish(b *testing.B) {
	for _, srv := range []string{"bus", "reference"} {
		b.Run("server="+srv, func(b *testing.B) { benchMQTTQoS1Publish(b, srv) })
	}
}

const mqttQoS1Window = 32

func benchMQTTQoS1Publish(b *testing.B, srv string) {
	var tg mqttTarget
	if srv == "bus" {
		_, tg = startBusMQTT(b, server.Options{JetStream: true, StoreDir: b.TempDir()})
	} else {
		port := freePort(b)
		startReferenceServer(b, &natsserver.Options{Host: "127.0.0.1", Port: -1, ServerName: "ref-bench", NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: b.TempDir(), MQTT: natsserver.MQTTOpts{Host: "127.0.0.1", Port: port}})
		tg.mqtt = fmt.Sprintf("tcp://127.0.0.1:%d", port)
	}
	addr := strings.TrimPrefix(tg.mqtt, "tcp://")
	subc, subr := benchMQTTConn(b, addr, "bench-q1sub")
	if _, err := subc.Write(mqtt.AppendSubscribe(nil, 1, [][]byte{[]byte("bench/q1")}, []byte{1})); err != nil {
		b.Fatal(err)
	}
	if h, _, err := subr.Next(); err != nil || h.Type != mqtt.SUBACK {
		b.Fatalf("SUBACK: %v %v", h.Type, err)
	}
	pubc, pubr := benchMQTTConn(b, addr, "bench-q1pub")
	payload := make([]byte, 64)
	var window []byte
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		k := min(mqttQoS1Window, b.N-sent)
		window = window[:0]
		for i := range k {
			window = mqtt.AppendPublish(window, &mqtt.Publish{QoS: 1, PacketID: uint16(i + 1), Topic: []byte("bench/q1"), Payload: payload})
		}
		if _, err := pubc.Write(window); err != nil {
			b.Fatal(err)
		}
		for range k {
			if h, _, err := pubr.Next(); err != nil || h.Type != mqtt.PUBACK {
				b.Fatalf("PUBACK: %v %v", h.Type, err)
			}
		}
		sent += k
	}
}
