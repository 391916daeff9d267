package tests

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/server/mqtt"
)

// BenchmarkMQTTPubSub: QoS 0 PUBLISH from one MQTT client to another
// through bus, with raw clients that allocate nothing per message, so
// allocs/op is the server's (the delivery path is mqttout.go's
// appendPublish). The publisher sends windows of mqttBenchWindow and
// waits for the subscriber to have them, so no message is shed. The
// same clients run against the reference's MQTT, side by side.
func BenchmarkMQTTPubSub(b *testing.B) {
	for _, srv := range []string{"bus", "reference"} {
		for _, size := range []int{64, 4096} {
			b.Run(fmt.Sprintf("server=%s/size=%d", srv, size), func(b *testing.B) {
				benchMQTTPubSub(b, srv, size)
			})
		}
	}
}

func benchMQTTPubSub(b *testing.B, srv string, size int) {
	var tg mqttTarget
	if srv == "bus" {
		_, tg = startBusMQTT(b, server.Options{})
	} else {
		port := freePort(b)
		startReferenceServer(b, &natsserver.Options{Host: "127.0.0.1", Port: -1, ServerName: "ref-bench", NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: b.TempDir(), MQTT: natsserver.MQTTOpts{Host: "127.0.0.1", Port: port}})
		tg.mqtt = fmt.Sprintf("tcp://127.0.0.1:%d", port)
	}
	addr := strings.TrimPrefix(tg.mqtt, "tcp://")
	subc, subr := benchMQTTConn(b, addr, "bench-sub")
	if _, err := subc.Write(mqtt.AppendSubscribe(nil, 1, [][]byte{[]byte("bench/+/temp")}, []byte{0})); err != nil {
		b.Fatal(err)
	}
	if h, _, err := subr.Next(); err != nil || h.Type != mqtt.SUBACK {
		b.Fatalf("SUBACK: %v %v", h.Type, err)
	}
	pubc, _ := benchMQTTConn(b, addr, "bench-pub")
	pkt := mqtt.AppendPublish(nil, &mqtt.Publish{Topic: []byte("bench/1/temp"), Payload: make([]byte, size)})
	window := make([]byte, 0, len(pkt)*mqttBenchWindow)
	for range mqttBenchWindow {
		window = append(window, pkt...)
	}
	got := make(chan int, 1)
	go func() {
		n := 0
		for n < b.N {
			h, _, err := subr.Next()
			if err != nil || h.Type != mqtt.PUBLISH {
				break
			}
			if n++; n%mqttBenchWindow == 0 || n == b.N {
				got <- n
			}
		}
		close(got)
	}()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		k := min(mqttBenchWindow, b.N-sent)
		if _, err := pubc.Write(window[:k*len(pkt)]); err != nil {
			b.Fatal(err)
		}
		sent += k
		if n, ok := <-got; !ok || n != sent {
			b.Fatalf("subscriber has %d of %d", n, sent)
		}
	}
}

const mqttBenchWindow = 1000

func benchMQTTConn(b *testing.B, addr, id string) (net.Conn, *mqtt.Reader) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	if _, err := nc.Write(mqtt.AppendConnect(nil, &mqtt.Connect{CleanSession: true, ClientID: []byte(id)})); err != nil {
		b.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(time.Minute))
	r := mqtt.NewReader(bufio.NewReaderSize(nc, 64<<10), 1<<20)
	if h, _, err := r.Next(); err != nil || h.Type != mqtt.CONNACK {
		b.Fatalf("CONNACK: %v %v", h.Type, err)
	}
	return nc, r
}
