package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
	"github.com/bus-dev/bus/server/mqtt"
)

// Retained messages (issue 25), the same paho scripts against bus and
// the reference nats-server 2.15.2, both with JetStream: what is stored,
// replaced and cleared, what a new subscription gets with the retain
// flag, who may read it, and retained wills.

// startRetainPair runs bus (with JetStream) and the reference with the
// same authorization and an mqtt block, bus first.
func startRetainPair(t *testing.T, auth server.Authorization) []mqttTarget {
	t.Helper()
	_, bus := startBusMQTT(t, server.Options{Authorization: auth, JetStream: true})
	ro := refOptions(auth)
	ro.ServerName, ro.JetStream, ro.StoreDir = "ref-mqtt", true, t.TempDir()
	port := freePort(t)
	ro.MQTT = natsserver.MQTTOpts{Host: "127.0.0.1", Port: port}
	ns := startReferenceServer(t, ro)
	return []mqttTarget{bus, {name: "reference", nats: "nats://" + refAddr(ns), mqtt: fmt.Sprintf("tcp://127.0.0.1:%d", port)}}
}

// retainedSubscribe subscribes c to filter and returns its messages as
// "topic payload" with " (retained)" for those with the retain flag.
func retainedSubscribe(t *testing.T, c paho.Client, filter string) <-chan string {
	t.Helper()
	ch := make(chan string, 256)
	tok := c.Subscribe(filter, 0, func(_ paho.Client, m paho.Message) {
		s := m.Topic() + " " + string(m.Payload())
		if m.Retained() {
			s += " (retained)"
		}
		ch <- s
	})
	waitToken(t, "subscribe "+filter, tok)
	return ch
}

// drainSorted is every message of ch until none comes within quiet, sorted
// (the two servers send retained messages in different orders).
func drainSorted(ch <-chan string, first, quiet time.Duration) []string {
	var got []string
	for m := recv(ch, first); m != ""; m = recv(ch, quiet) {
		got = append(got, m)
	}
	slices.Sort(got)
	return got
}

// subscribeRetained subscribes c to filter and returns what comes at
// once, sorted and joined.
func subscribeRetained(t *testing.T, c paho.Client, filter string) string {
	t.Helper()
	return strings.Join(drainSorted(retainedSubscribe(t, c, filter), 2*time.Second, 300*time.Millisecond), ", ")
}

// publishRetained publishes with the retain flag and waits for it.
func publishRetained(t *testing.T, c paho.Client, topic string, qos byte, payload string) {
	t.Helper()
	waitToken(t, "publish "+topic, c.Publish(topic, qos, true, payload))
}

// mqttBarrier returns once the server has handled what c published
// before: a QoS 0 PUBLISH is done for paho once written, and a server
// handles a connection's packets in order, so a QoS 1 one's PUBACK is
// the barrier. Its topic has no subscribers.
func mqttBarrier(t *testing.T, c paho.Client) {
	t.Helper()
	waitToken(t, "barrier", c.Publish("barrier/none", 1, false, "b"))
}

// TestMQTTRetainedMatchesReference: a retained PUBLISH is stored and
// replaced by the next on its topic, an empty one clears it, a new
// subscription gets the matching ones with the retain flag ("+", "#",
// "a/#" matching "a"), live messages have it clear, and NATS clients see
// retained publishes as any.
func TestMQTTRetainedMatchesReference(t *testing.T) {
	var got [2][]string
	for i, tg := range startRetainPair(t, server.Authorization{}) {
		nc := connect(t, tg.nats)
		natsSeen := make(chan string, 64)
		if _, err := nc.Subscribe("r.>", func(m *nats.Msg) { natsSeen <- m.Subject + " " + string(m.Data) }); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		pub := mustPaho(t, pahoOptions(tg.mqtt, "rpub"))
		publishRetained(t, pub, "r/a", 0, "1")
		publishRetained(t, pub, "r/a", 1, "2") // replaces "1"
		publishRetained(t, pub, "r/b/c", 0, "x")
		publishRetained(t, pub, "r", 0, "top")
		publishRetained(t, pub, "r/d", 0, "z")
		publishRetained(t, pub, "r/d", 0, "") // clears r/d
		publishRetained(t, pub, "other/x", 0, "o")
		mqttBarrier(t, pub)
		got[i] = append(got[i], "nats: "+strings.Join(drainSorted(natsSeen, 5*time.Second, 300*time.Millisecond), ", "))

		sub := mustPaho(t, pahoOptions(tg.mqtt, "rsub"))
		for _, f := range []string{"r/#", "r/+", "r/a", "r/d", "+/x"} {
			got[i] = append(got[i], f+": "+subscribeRetained(t, sub, f))
		}
		live := retainedSubscribe(t, sub, "live/#")
		publishRetained(t, pub, "live/1", 0, "now")
		got[i] = append(got[i], "live/#: "+recv(live, 5*time.Second))
		mqttBarrier(t, pub)
		// A later subscription gets the one just stored. The reference
		// stores retained messages asynchronously, after the PUBACK that
		// mqttBarrier waits for, so a loaded machine can subscribe before
		// it has: ask again with new subscribers for a while (bus stores
		// before it routes, so its first answer has it).
		var seen string
		for try, deadline := 0, time.Now().Add(10*time.Second); seen == "" && time.Now().Before(deadline); try++ {
			if try > 0 && tg.name != "reference" {
				t.Fatalf("%s: the first subscription after the store did not get it", tg.name)
			}
			again := mustPaho(t, pahoOptions(tg.mqtt, fmt.Sprintf("rsub2-%d", try)))
			seen = subscribeRetained(t, again, "live/#")
			again.Disconnect(0)
		}
		got[i] = append(got[i], "live/# again: "+seen)
	}
	t.Logf("outcomes: %q", got[0])
	sameOutcomes(t, got[1], got[0])
	if want := "r/#: r top (retained), r/a 2 (retained), r/b/c x (retained)"; got[0][1] != want {
		t.Errorf("bus %q, want %q", got[0][1], want)
	}
}

// TestMQTTRetainedPermissionsMatchReference: a retained message goes
// only to subscribers who may subscribe to its own subject, also under a
// wildcard filter that a deny rule overlaps (GHSA-7qmq-8cc4-hxwg); a
// retained publish the user may not make stores nothing.
func TestMQTTRetainedPermissionsMatchReference(t *testing.T) {
	auth := server.Authorization{Users: []server.User{
		{Name: "dev", Password: "pw", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"own.>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"in", "in.>", "own", "own.>"}, Deny: []string{"in.secret", "in.*.hidden"}},
		}},
		{Name: "svc", Password: "svc"},
	}}
	var got [2][]string
	for i, tg := range startRetainPair(t, auth) {
		svc := mustPaho(t, pahoOptions(tg.mqtt, "psvc").SetUsername("svc").SetPassword("svc"))
		for _, topic := range []string{"in/open", "in/secret", "in/x/hidden", "in/x/shown", "out/side"} {
			publishRetained(t, svc, topic, 0, "v")
		}
		mqttBarrier(t, svc)
		dev := mustPaho(t, pahoOptions(tg.mqtt, "pdev").SetUsername("dev").SetPassword("pw"))
		publishRetained(t, dev, "in/forbidden", 0, "not allowed") // dev may not publish there
		publishRetained(t, dev, "own/ok", 0, "mine")
		mqttBarrier(t, dev)
		for _, f := range []string{"in/#", "in/+", "in/+/+", "own/#"} {
			got[i] = append(got[i], f+": "+subscribeRetained(t, dev, f))
		}
		all := mustPaho(t, pahoOptions(tg.mqtt, "pall").SetUsername("svc").SetPassword("svc"))
		got[i] = append(got[i], "svc in/#: "+subscribeRetained(t, all, "in/#"))
	}
	t.Logf("outcomes: %q", got[0])
	sameOutcomes(t, got[1], got[0])
}

// TestMQTTRetainedWillMatchesReference: a will with the retain flag is
// stored as its topic's retained message when it goes out.
func TestMQTTRetainedWillMatchesReference(t *testing.T) {
	var got [2][]string
	for i, tg := range startRetainPair(t, server.Authorization{}) {
		nc := connect(t, tg.nats)
		seen := make(chan string, 8)
		if _, err := nc.Subscribe("dev.*.status", func(m *nats.Msg) { seen <- m.Subject + " " + string(m.Data) }); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		dropped, code := dialMQTT(t, tg.mqtt, &mqtt.Connect{CleanSession: true, KeepAlive: 30, ClientID: []byte("w1"),
			HasWill: true, WillRetain: true, WillTopic: []byte("dev/w1/status"), WillMessage: []byte("offline")})
		got[i] = append(got[i], "connack "+string('0'+code))
		dropped.nc.Close()
		got[i] = append(got[i], "nats: "+recv(seen, 5*time.Second))
		sub := mustPaho(t, pahoOptions(tg.mqtt, "wsub"))
		got[i] = append(got[i], "dev/+/status: "+subscribeRetained(t, sub, "dev/+/status"))
	}
	t.Logf("outcomes: %q", got[0])
	sameOutcomes(t, got[1], got[0])
}

// TestMQTTRetainedManyMatchReference: filters matching more retained
// topics than bus reads one by one (it reads them through a consumer
// then), some cleared, with "+", "a/#" and "#".
func TestMQTTRetainedManyMatchReference(t *testing.T) {
	var got [2][]string
	for i, tg := range startRetainPair(t, server.Authorization{}) {
		pub := mustPaho(t, pahoOptions(tg.mqtt, "mpub"))
		publishRetained(t, pub, "many", 0, "parent")
		for n := range 40 {
			publishRetained(t, pub, fmt.Sprintf("many/%d", n), 0, fmt.Sprint("v", n))
		}
		for n := 0; n < 40; n += 3 {
			publishRetained(t, pub, fmt.Sprintf("many/%d", n), 0, "")
		}
		publishRetained(t, pub, "many/7/deep", 0, "d")
		mqttBarrier(t, pub)
		sub := mustPaho(t, pahoOptions(tg.mqtt, "msub"))
		for _, f := range []string{"many/+", "many/#", "#"} {
			got[i] = append(got[i], f+": "+subscribeRetained(t, sub, f))
		}
	}
	t.Logf("outcomes: %q", got[0])
	sameOutcomes(t, got[1], got[0])
	if n := strings.Count(got[0][0], "(retained)"); n != 26 {
		t.Errorf("many/+ got %d retained, want 26", n)
	}
}

// TestMQTTRetainedDollarTopicDiffers pins a known difference: a filter
// starting with a wildcard gets no topic starting with '$'
// ([MQTT-4.7.2-1]). The reference holds to that for live messages
// (TestMQTTDollarTopicsMatchReference) but sends such retained
// messages to "#" and "+/x"; bus holds to it for both, and sends them
// to a filter that names the level ("$dev/#").
func TestMQTTRetainedDollarTopicDiffers(t *testing.T) {
	want := [][]string{
		{"#: ", "+/x: ", "$dev/#: $dev/x v (retained)"},
		{"#: $dev/x v (retained)", "+/x: $dev/x v (retained)", "$dev/#: $dev/x v (retained)"},
	}
	for i, tg := range startRetainPair(t, server.Authorization{}) {
		pub := mustPaho(t, pahoOptions(tg.mqtt, "dpub"))
		publishRetained(t, pub, "$dev/x", 0, "v")
		mqttBarrier(t, pub)
		sub := mustPaho(t, pahoOptions(tg.mqtt, "dsub"))
		for j, f := range []string{"#", "+/x", "$dev/#"} {
			if got := f + ": " + subscribeRetained(t, sub, f); got != want[i][j] {
				t.Errorf("%s: %q, want %q", tg.name, got, want[i][j])
			}
		}
	}
}
