package tests

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/server/mqtt"
)

// TestMQTTRetainedSurvivesRestart: retained messages live in the
// $MQTT_rmsgs stream, which NATS tools list with the reference's config,
// and a restarted bus (same store) sends them to new subscriptions; a
// cleared topic stays cleared.
func TestMQTTRetainedSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s, tg := startBusMQTT(t, server.Options{JetStream: true, StoreDir: dir})
	pub := mustPaho(t, pahoOptions(tg.mqtt, "keeper"))
	publishRetained(t, pub, "state/1", 1, "on")
	publishRetained(t, pub, "state/2", 0, "off")
	publishRetained(t, pub, "state/2", 0, "") // cleared
	publishRetained(t, pub, "state/3", 0, "first")
	publishRetained(t, pub, "state/3", 0, "second")
	mqttBarrier(t, pub)

	js, err := jetstream.New(connect(t, tg.nats))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var names []string
	for n := range js.StreamNames(ctx).Name() {
		names = append(names, n)
	}
	if !slices.Contains(names, "$MQTT_rmsgs") {
		t.Fatalf("streams %q, want $MQTT_rmsgs among them", names)
	}
	st, err := js.Stream(ctx, "$MQTT_rmsgs")
	if err != nil {
		t.Fatal(err)
	}
	cfg := st.CachedInfo().Config
	if !slices.Equal(cfg.Subjects, []string{"$MQTT.rmsgs.>"}) || cfg.MaxMsgsPerSubject != 1 || cfg.Storage != jetstream.FileStorage || cfg.Retention != jetstream.LimitsPolicy {
		t.Errorf("config %+v, want the reference's", cfg)
	}
	if n := st.CachedInfo().State.Msgs; n != 2 {
		t.Errorf("%d records, want 2 (state/1, state/3)", n)
	}
	m, err := st.GetLastMsgForSubject(ctx, "$MQTT.rmsgs.state.3")
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "second" || m.Header.Get("Nmqtt-RTopic") != "state/3" || m.Header.Get("Nmqtt-RFlags") != "1" {
		t.Errorf("record %q %v, want the reference's headers", m.Data, m.Header)
	}
	pub.Disconnect(0)
	shutdown(t, s)

	_, tg = startBusMQTT(t, server.Options{JetStream: true, StoreDir: dir})
	sub := mustPaho(t, pahoOptions(tg.mqtt, "after"))
	if got, want := subscribeRetained(t, sub, "state/#"), "state/1 on (retained), state/3 second (retained)"; got != want {
		t.Errorf("after restart: %q, want %q", got, want)
	}
}

// TestMQTTRetainedManyTopics measures what 100,000 retained topics cost:
// the heap the index adds (bytes per topic) and the time a subscription
// to "#" takes to get them all. It runs with BUS_MQTT_RETAINED_TOPICS
// set to the count (docs/mqtt.md has the numbers).
func TestMQTTRetainedManyTopics(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BUS_MQTT_RETAINED_TOPICS"))
	if n <= 0 {
		t.Skip("set BUS_MQTT_RETAINED_TOPICS to measure")
	}
	dir := t.TempDir()
	s, tg := startBusMQTT(t, server.Options{JetStream: true, StoreDir: dir})
	heapBefore := heapInUse()
	raw, code := dialMQTT(t, tg.mqtt, &mqtt.Connect{CleanSession: true, ClientID: []byte("loader")})
	if code != 0 {
		t.Fatalf("connect %#x", code)
	}
	start := time.Now()
	var batch []byte
	for i := range n {
		batch = mqtt.AppendPublish(batch, &mqtt.Publish{Retain: true, Topic: fmt.Appendf(nil, "site/%d/dev/%d/state", i/1000, i), Payload: []byte("online")})
		if len(batch) > 32<<10 || i == n-1 {
			if _, err := raw.nc.Write(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if _, err := raw.nc.Write(mqtt.AppendPublish(nil, &mqtt.Publish{QoS: 1, PacketID: 1, Topic: []byte("done")})); err != nil {
		t.Fatal(err)
	}
	_ = raw.nc.SetReadDeadline(time.Now().Add(10 * time.Minute))
	if h, _, err := raw.r.Next(); err != nil || h.Type != mqtt.PUBACK {
		t.Fatalf("barrier: %v %v", h.Type, err)
	}
	t.Logf("stored %d retained topics in %v", n, time.Since(start))
	grown := heapInUse() - heapBefore
	t.Logf("heap grew %d MiB, %d bytes per retained topic (the index and the stream's own subject index); RSS %s", grown>>20, grown/int64(n), vmRSS())

	subscribeAll := func(tg mqttTarget, what string) {
		sub, code := dialMQTT(t, tg.mqtt, &mqtt.Connect{CleanSession: true, ClientID: []byte("all")})
		if code != 0 {
			t.Fatalf("connect %#x", code)
		}
		start := time.Now()
		if _, err := sub.nc.Write(mqtt.AppendSubscribe(nil, 1, [][]byte{[]byte("#")}, []byte{0})); err != nil {
			t.Fatal(err)
		}
		_ = sub.nc.SetReadDeadline(time.Now().Add(10 * time.Minute))
		got := 0
		for got < n {
			h, _, err := sub.r.Next()
			if err != nil {
				t.Fatalf("after %d: %v", got, err)
			}
			if h.Type == mqtt.PUBLISH && h.Flags&1 == 1 {
				got++
			}
		}
		t.Logf("%s: subscribe # got %d retained in %v; RSS %s", what, got, time.Since(start), vmRSS())
		sub.nc.Close()
	}
	subscribeAll(tg, "running")
	raw.nc.Close()
	shutdown(t, s)
	_, tg = startBusMQTT(t, server.Options{JetStream: true, StoreDir: dir})
	subscribeAll(tg, "restarted (the index read back first)")
}

// vmRSS is the process's resident set, from /proc (0 elsewhere).
func vmRSS() string {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// TestMQTTRetainedDeletedWithNATSTools: a record removed from
// $MQTT_rmsgs with the JetStream API (nats stream rmm) is no longer
// sent, and the others still are.
func TestMQTTRetainedDeletedWithNATSTools(t *testing.T) {
	_, tg := startBusMQTT(t, server.Options{JetStream: true})
	pub := mustPaho(t, pahoOptions(tg.mqtt, "p"))
	publishRetained(t, pub, "cfg/a", 0, "1")
	publishRetained(t, pub, "cfg/b", 0, "2")
	mqttBarrier(t, pub)
	js, err := jetstream.New(connect(t, tg.nats))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "$MQTT_rmsgs")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "$MQTT.rmsgs.cfg.a")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, m.Sequence); err != nil {
		t.Fatal(err)
	}
	sub := mustPaho(t, pahoOptions(tg.mqtt, "s"))
	for range 2 { // the second time after the index forgot it
		if got, want := subscribeRetained(t, sub, "cfg/+"), "cfg/b 2 (retained)"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
