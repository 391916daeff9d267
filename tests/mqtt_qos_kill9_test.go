package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bus-dev/bus/server/mqtt"
)

// TestMQTTQoS1SurvivesKill9: QoS 1 messages acknowledged (PUBACK) are
// stored: after kill -9 and a restart on the same store, the persistent
// session is still there (CONNACK session present), its subscription
// restored, and every message it had not acknowledged comes again, with
// DUP set.
func TestMQTTQoS1SurvivesKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "bus.yaml")
	conf := fmt.Sprintf("mqtt:\n  host: 127.0.0.1\n  port: %d\n  ack_wait: 1s\n", port)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	broker := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	cmd, _ := startBusProcess(t, dir, "-c", cfg)
	session := &mqtt.Connect{CleanSession: false, KeepAlive: 60, ClientID: []byte("k9")}

	sub, present, code := dialMQTTSession(t, broker, session)
	if code != 0 || present {
		t.Fatalf("first connect: code %d, present %v", code, present)
	}
	sub.send(t, mqtt.AppendSubscribe(nil, 1, [][]byte{[]byte("k/#")}, []byte{1}))
	if h, body, ok := sub.next(t, 5*time.Second); !ok || h.Type != mqtt.SUBACK || body[2] != 1 {
		t.Fatalf("suback %s %x", h.Type, body)
	}
	sub.nc.Close()

	const published = 20
	pub := mustPaho(t, pahoOptions(broker, "k9pub"))
	for i := 1; i <= published; i++ {
		waitToken(t, "publish", pub.Publish(fmt.Sprintf("k/%d", i), 1, false, fmt.Sprint(i)))
	}
	pub.Disconnect(0)

	// Delivered and not acknowledged before the kill.
	sub, present, _ = dialMQTTSession(t, broker, session)
	if !present {
		t.Fatal("session not present on reconnect")
	}
	for i := range published {
		if _, ok := sub.nextPublish(t, 5*time.Second); !ok {
			t.Fatalf("delivery %d before the kill missing", i)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	sub.nc.Close()

	startBusProcess(t, dir, "-c", cfg)
	sub, present, code = dialMQTTSession(t, broker, session)
	if code != 0 || !present {
		t.Fatalf("after restart: code %d, present %v", code, present)
	}
	seen := map[string]bool{}
	for len(seen) < published {
		p, ok := sub.nextPublish(t, 10*time.Second)
		if !ok {
			t.Fatalf("after restart got %d of %d: %v", len(seen), published, seen)
		}
		if !p.Dup || p.QoS != 1 {
			t.Errorf("redelivery of %s: qos %d dup %v", p.Payload, p.QoS, p.Dup)
		}
		seen[string(p.Payload)] = true
		sub.send(t, mqtt.AppendAck(nil, mqtt.PUBACK, p.PacketID))
	}
	if p, ok := sub.nextPublish(t, 2*time.Second); ok {
		t.Errorf("acknowledged message %s came again", p.Payload)
	}
}
