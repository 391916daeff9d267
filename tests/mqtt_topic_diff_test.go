package tests

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/bus-dev/bus/server/mqtt"
	paho "github.com/eclipse/paho.mqtt.golang"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// startReferenceMQTT starts the reference server with its MQTT listener
// (which needs a server name and JetStream) and returns its NATS URL and
// MQTT address.
func startReferenceMQTT(t *testing.T) (natsURL, mqttAddr string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ns := startReferenceServer(t, &natsserver.Options{
		Host: "127.0.0.1", Port: -1, ServerName: "ref-mqtt", NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir(),
		MQTT: natsserver.MQTTOpts{Host: "127.0.0.1", Port: port},
	})
	return "nats://" + refAddr(ns), fmt.Sprintf("tcp://127.0.0.1:%d", port)
}

func connectPaho(t *testing.T, addr, id string) paho.Client {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(addr).SetClientID(id).
		SetCleanSession(true).SetAutoReconnect(false).SetConnectRetry(false))
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("MQTT connect %s: %v", addr, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c
}

// TestMQTTTopicMappingMatchesReference publishes MQTT topics to the
// reference server and reads the subjects a NATS subscriber sees, and
// publishes NATS subjects and reads the topics an MQTT subscriber sees:
// server/mqtt's mapping must give the same both ways.
func TestMQTTTopicMappingMatchesReference(t *testing.T) {
	natsURL, mqttAddr := startReferenceMQTT(t)
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	topics := []string{"foo", "foo/bar", "/foo", "foo/", "foo//bar", "/", "//", "a///b", "v1.2/x", "a.b", "é/ü", "x/$y"}

	// MQTT → NATS.
	subjectsSeen := make(chan string, 64)
	sub, err := nc.Subscribe(">", func(m *nats.Msg) {
		if m.Subject[0] != '$' {
			subjectsSeen <- m.Subject
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	pub := connectPaho(t, mqttAddr, "mapper-pub")
	for _, topic := range topics {
		if tok := pub.Publish(topic, 0, false, "x"); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish %q: %v", topic, tok.Error())
		}
		var got string
		select {
		case got = <-subjectsSeen:
		case <-time.After(5 * time.Second):
			t.Fatalf("reference delivered nothing to NATS for topic %q", topic)
		}
		want, err := mqtt.TopicToSubject(nil, []byte(topic))
		if err != nil || string(want) != got {
			t.Errorf("topic %q: reference subject %q, ours %q (%v)", topic, got, want, err)
		}
	}
	sub.Unsubscribe()

	// NATS → MQTT.
	var mu sync.Mutex
	var topicsSeen []string
	subc := connectPaho(t, mqttAddr, "mapper-sub")
	if tok := subc.Subscribe("#", 0, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		topicsSeen = append(topicsSeen, m.Topic())
		mu.Unlock()
	}); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	for i, topic := range topics {
		subj, _ := mqtt.TopicToSubject(nil, []byte(topic))
		if err := nc.Publish(string(subj), []byte("x")); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(topicsSeen) > i })
		mu.Lock()
		got := topicsSeen[i]
		mu.Unlock()
		if ours := string(mqtt.SubjectToTopic(nil, string(subj))); ours != got {
			t.Errorf("subject %q: reference topic %q, ours %q", subj, got, ours)
		}
	}
}

// TestMQTTParentLevelMatchesReference: "a/#" receives a NATS publish on
// "a" itself with the reference, as FilterToSubject's parent subject does.
func TestMQTTParentLevelMatchesReference(t *testing.T) {
	natsURL, mqttAddr := startReferenceMQTT(t)
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	got := make(chan string, 4)
	c := connectPaho(t, mqttAddr, "parent")
	if tok := c.Subscribe("a/#", 0, func(_ paho.Client, m paho.Message) { got <- m.Topic() }); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	subj, parent, err := mqtt.FilterToSubject(nil, []byte("a/#"))
	if err != nil || parent == 0 {
		t.Fatalf("FilterToSubject: %q %d %v", subj, parent, err)
	}
	if err := nc.Publish(string(subj[:parent]), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case topic := <-got:
		if topic != "a" {
			t.Fatalf("got topic %q, want a", topic)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reference did not deliver the parent level")
	}
}

// TestMQTTNATSWildcardTopicsDiffer pins a deliberate difference: the
// reference publishes MQTT topic "a/*" to the wildcard subject "a.*" (and
// "a/>" to "a.>"); bus's mapping refuses both, and its listener will
// refuse such a PUBLISH.
func TestMQTTNATSWildcardTopicsDiffer(t *testing.T) {
	natsURL, mqttAddr := startReferenceMQTT(t)
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	seen := make(chan string, 4)
	if _, err := nc.Subscribe(">", func(m *nats.Msg) {
		if m.Subject[0] != '$' {
			seen <- m.Subject
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	c := connectPaho(t, mqttAddr, "wildcards")
	for topic, subject := range map[string]string{"a/*": "a.*", "a/>": "a.>"} {
		if tok := c.Publish(topic, 0, false, "x"); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish %q: %v", topic, tok.Error())
		}
		select {
		case got := <-seen:
			if got != subject {
				t.Errorf("reference mapped %q to %q, want %q", topic, got, subject)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("reference delivered nothing for %q", topic)
		}
		if _, err := mqtt.TopicToSubject(nil, []byte(topic)); !errors.Is(err, mqtt.ErrNATSWildcard) {
			t.Errorf("bus mapping of %q: %v, want ErrNATSWildcard", topic, err)
		}
	}
}
