package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The hub loses the node bus is linked to: bus dials another node (it
// learned their leaf URLs from INFO) and traffic flows again.
func TestLeafReconnectsWhenItsHubNodeGoes(t *testing.T) {
	hub := startHubCluster(t, 3, false, nil)
	leaf := startBusLeaf(t, hub, server.Options{LeafNodes: server.LeafNodeOptions{ReconnectInterval: 50 * time.Millisecond}},
		server.LeafRemote{URLs: hub.leafURLs()[:1]})
	onLeaf := connect(t, busURL(leaf))
	leafSub := subSync(t, onLeaf, "news", "")
	onHub := connect(t, hub.clientURL(2))
	awaitRoute(t, onHub, leafSub, "news")

	linked := -1
	for i, ns := range hub.nodes {
		if ns.NumLeafNodes() > 0 {
			linked = i
		}
	}
	if linked != 0 {
		t.Fatalf("link on node %d, want 0", linked)
	}
	hub.nodes[0].Shutdown()
	hub.nodes[0].WaitForShutdown()
	eventually(t, 10*time.Second, func() bool { return hub.nodes[1].NumLeafNodes()+hub.nodes[2].NumLeafNodes() == 1 })

	awaitRoute(t, onHub, leafSub, "news")
	hubSub := subSync(t, onHub, "replies", "")
	awaitRoute(t, onLeaf, hubSub, "replies")
	for i := range 5 {
		must(t, onHub.Publish("news", fmt.Appendf(nil, "n%d", i)))
		must(t, onLeaf.Publish("replies", fmt.Appendf(nil, "r%d", i)))
	}
	for i := range 5 {
		for _, sub := range []*nats.Subscription{leafSub, hubSub} {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil || string(m.Data[1:]) != fmt.Sprint(i) {
				t.Fatalf("after failover, message %d on %s: %v %v", i, sub.Subject, m, err)
			}
		}
	}
}

// A client of the hub manages and reads bus's streams through bus's
// JetStream domain, as with a nats-server leaf: the API on
// $JS.bus.API.>, pulls and acks across the link, and the stored subject
// shown on each message.
func TestLeafHubClientUsesBusJetStreamDomain(t *testing.T) {
	hub := startHubCluster(t, 3, true, nil)
	leaf := startBusLeaf(t, hub, server.Options{JetStream: true, JetStreamDomain: "bus"},
		server.LeafRemote{URLs: hub.leafURLs()})
	onHub := connect(t, hub.clientURL(1))
	js, err := jetstream.NewWithDomain(onHub, "bus")
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var st jetstream.Stream
	eventually(t, 10*time.Second, func() bool {
		st, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
		return err == nil
	})
	// Published on the hub, captured by bus's stream across the link.
	for i := range 5 {
		ack, err := js.Publish(ctx, fmt.Sprintf("orders.%d", i), fmt.Appendf(nil, "o%d", i))
		must(t, err)
		if ack.Domain != "bus" || ack.Sequence != uint64(i+1) {
			t.Fatalf("ack %+v", ack)
		}
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "d", AckPolicy: jetstream.AckExplicitPolicy})
	must(t, err)
	batch, err := cons.Fetch(5, jetstream.FetchMaxWait(5*time.Second))
	must(t, err)
	n := 0
	for m := range batch.Messages() {
		if m.Subject() != fmt.Sprintf("orders.%d", n) || string(m.Data()) != fmt.Sprintf("o%d", n) {
			t.Fatalf("message %d: %s %q", n, m.Subject(), m.Data())
		}
		must(t, m.DoubleAck(ctx))
		n++
	}
	if n != 5 {
		t.Fatalf("fetched %d of 5", n)
	}
	info, err := cons.Info(ctx)
	must(t, err)
	if info.AckFloor.Stream != 5 || info.NumAckPending != 0 {
		t.Fatalf("consumer after acks: floor %d, pending %d", info.AckFloor.Stream, info.NumAckPending)
	}
	// The hub's own JetStream stays its own: bus answers only its domain.
	hubJS, err := jetstream.New(onHub)
	must(t, err)
	if _, err := hubJS.Stream(ctx, "ORDERS"); err == nil {
		t.Fatal("the hub's domain sees bus's stream")
	}
	local := connect(t, busURL(leaf))
	localJS, err := jetstream.New(local)
	must(t, err)
	if _, err := localJS.Stream(ctx, "ORDERS"); err != nil {
		t.Fatalf("bus's own client: %v", err)
	}
}
