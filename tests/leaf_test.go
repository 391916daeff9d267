package tests

import (
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
	"github.com/nats-io/nats.go"
)

// Bus joins a NATS cluster as a leaf node (issue 15): core messages cross
// the link both ways as interest dictates.

func TestLeafPubSubBothWays(t *testing.T) {
	hub := startHubCluster(t, 3, false, nil)
	leaf := startBusLeaf(t, hub, server.Options{}, server.LeafRemote{URLs: hub.leafURLs()[:1]})
	onHub := connect(t, hub.clientURL(2)) // another node than the link's
	onLeaf := connect(t, busURL(leaf))

	// Hub subscriber, leaf publisher, with a wildcard.
	hubSub, err := onHub.SubscribeSync("orders.*")
	if err != nil {
		t.Fatal(err)
	}
	awaitRoute(t, onLeaf, hubSub, "orders.probe")
	if err := onLeaf.Publish("orders.new", []byte("from leaf")); err != nil {
		t.Fatal(err)
	}
	m, err := hubSub.NextMsg(5 * time.Second)
	if err != nil || string(m.Data) != "from leaf" || m.Subject != "orders.new" {
		t.Fatalf("hub got %v, %v", m, err)
	}

	// Leaf subscriber, hub publisher, with headers.
	leafSub, err := onLeaf.SubscribeSync("events.>")
	if err != nil {
		t.Fatal(err)
	}
	awaitRoute(t, onHub, leafSub, "events.probe")
	msg := nats.NewMsg("events.a.b")
	msg.Header.Set("K", "v")
	msg.Data = []byte("from hub")
	if err := onHub.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	m, err = leafSub.NextMsg(5 * time.Second)
	if err != nil || string(m.Data) != "from hub" || m.Header.Get("K") != "v" {
		t.Fatalf("leaf got %v, %v", m, err)
	}
}
