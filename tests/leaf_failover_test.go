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

// A client of the hub manages and reads a leaf's streams through the
// leaf's JetStream domain: the API on $JS.bus.API.>, publishes captured
// across the link, pulls and acks across it, and the stored subject shown
// on each message. Bus and a nats-server leaf give the same outcomes.
func TestLeafHubClientUsesLeafJetStreamDomain(t *testing.T) {
	ref := scenarioLeafDomain(t, func(t *testing.T, hub *hubCluster) string {
		return startReferenceLeafJS(t, hub, "bus").ClientURL()
	})
	got := scenarioLeafDomain(t, func(t *testing.T, hub *hubCluster) string {
		return busURL(startBusLeaf(t, hub, server.Options{JetStream: true, JetStreamDomain: "bus"}, server.LeafRemote{URLs: hub.leafURLs()}))
	})
	sameOutcomes(t, ref, got)
}

func scenarioLeafDomain(t *testing.T, join func(*testing.T, *hubCluster) string) []string {
	hub := startHubCluster(t, 3, true, nil)
	leafURL := join(t, hub)
	onHub := connect(t, hub.clientURL(1))
	js, err := jetstream.NewWithDomain(onHub, "bus")
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	var st jetstream.Stream
	eventually(t, 10*time.Second, func() bool {
		st, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
		return err == nil
	})
	for i := range 5 {
		ack, err := js.Publish(ctx, fmt.Sprintf("orders.%d", i), fmt.Appendf(nil, "o%d", i))
		must(t, err)
		out = append(out, fmt.Sprintf("ack stream=%s seq=%d domain=%s", ack.Stream, ack.Sequence, ack.Domain))
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "d", AckPolicy: jetstream.AckExplicitPolicy})
	must(t, err)
	batch, err := cons.Fetch(5, jetstream.FetchMaxWait(5*time.Second))
	must(t, err)
	for m := range batch.Messages() {
		md, err := m.Metadata()
		must(t, err)
		out = append(out, fmt.Sprintf("got %s %q seq=%d domain=%s", m.Subject(), m.Data(), md.Sequence.Stream, md.Domain))
		must(t, m.DoubleAck(ctx))
	}
	info, err := cons.Info(ctx)
	must(t, err)
	out = append(out, fmt.Sprintf("consumer floor=%d pending=%d waiting=%d", info.AckFloor.Stream, info.NumAckPending, info.NumPending))
	// The hub's own JetStream stays its own.
	hubJS, err := jetstream.New(onHub)
	must(t, err)
	_, err = hubJS.Stream(ctx, "ORDERS")
	out = append(out, fmt.Sprintf("hub domain sees it: %v", err == nil))
	localJS, err := jetstream.New(connect(t, leafURL))
	must(t, err)
	_, err = localJS.Stream(ctx, "ORDERS")
	out = append(out, fmt.Sprintf("leaf's own client sees it: %v", err == nil))
	return out
}
