package server

import (
	"bytes"
	"testing"

	"github.com/bus-dev/bus/server/mqtt"
)

// appendPublish frames a delivery as the PUBLISH the codec decodes, on
// the topic the subject maps back to, without the header block.
func TestAppendPublishFrames(t *testing.T) {
	o := newOutbound(newChunkPool(), 1<<20)
	o.mqtt = true
	hdr := []byte("NATS/1.0\r\nA: b\r\n\r\n")
	msg := append(append([]byte(nil), hdr...), "payload"...)
	if res := o.appendPublish([]byte("v1//2.x./"), len(hdr), msg); !res.queued {
		t.Fatal("not queued")
	}
	o.appendControl("PING\r\n") // a NATS line: dropped on an MQTT queue
	var wire []byte
	for _, c := range o.take(nil) {
		wire = append(wire, c.b...)
	}
	r := mqtt.NewReader(bytes.NewReader(wire), 1<<20)
	h, body, err := r.Next()
	if err != nil || h.Type != mqtt.PUBLISH {
		t.Fatalf("%v %v", h.Type, err)
	}
	var p mqtt.Publish
	if err := mqtt.DecodePublish(h.Flags, body, &p); err != nil || string(p.Topic) != "v1.2/x/" || string(p.Payload) != "payload" || p.QoS != 0 {
		t.Fatalf("decoded %+v %v", p, err)
	}
	if _, _, err := r.Next(); err == nil {
		t.Fatal("more than one packet queued")
	}
}

// appendPublish allocates nothing once its scratch has grown (see
// BenchmarkMQTTPubSub in tests).
func TestAppendPublishAllocatesNothing(t *testing.T) {
	o := newOutbound(newChunkPool(), 1<<30)
	o.mqtt = true
	subject, msg := []byte("sensors.kitchen.temp"), make([]byte, 64)
	var taken []*chunk
	drain := func() { taken = o.take(taken); o.written(taken) } // as the writer does
	o.appendPublish(subject, -1, msg)
	drain()
	allocs := testing.AllocsPerRun(1000, func() {
		o.appendPublish(subject, -1, msg)
		drain()
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per appendPublish", allocs)
	}
}

// mqttStoredQoS reads the Nmqtt-Pub header's QoS without allocating
// (it is asked on every delivery with headers to a QoS 1 subscription).
func TestMQTTStoredQoS(t *testing.T) {
	for hdr, want := range map[string]bool{
		"NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n":         true,
		"NATS/1.0\r\nNmqtt-Pub:2\r\n\r\n":         true,
		"NATS/1.0\r\nNmqtt-Pub:0\r\n\r\n":         false,
		"NATS/1.0\r\nX:1\r\nNmqtt-Pub:1\r\n\r\n":  true,
		"NATS/1.0\r\nXNmqtt-Pub:1\r\n\r\n":        false,
		"NATS/1.0\r\nNmqtt-Pub:":                  false,
		"NATS/1.0\r\nNats-Msg-Id:Nmqtt-Pub:1\r\n": false,
	} {
		if got := mqttStoredQoS([]byte(hdr)); got != want {
			t.Errorf("%q: %v, want %v", hdr, got, want)
		}
	}
	hdr := []byte("NATS/1.0\r\nNmqtt-Pub:1\r\n\r\n")
	if n := testing.AllocsPerRun(100, func() { mqttStoredQoS(hdr) }); n != 0 {
		t.Errorf("%v allocs", n)
	}
}
