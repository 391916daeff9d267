package tests

import (
	"context"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A bus stream sources, and another mirrors, a stream of the hub's
// JetStream domain across the leaf link. The link is cut mid-stream
// (the hub kicks it) while the hub goes on storing; once bus has dialed
// again, both copies hold every origin message exactly once.
func TestLeafSourceCatchesUpAfterTheLinkDrops(t *testing.T) {
	hub := startHubCluster(t, 3, true, nil)
	leaf := startBusLeaf(t, hub, server.Options{JetStream: true, JetStreamDomain: "bus",
		LeafNodes: server.LeafNodeOptions{ReconnectInterval: 50 * time.Millisecond}},
		server.LeafRemote{URLs: hub.leafURLs()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hubJS, err := jetstream.New(connect(t, hub.clientURL(0)))
	must(t, err)
	_, err = hubJS.CreateStream(ctx, jetstream.StreamConfig{Name: "ORIGIN", Subjects: []string{"o.>"}, Replicas: 1})
	must(t, err)
	publishN(t, ctx, hubJS, 0, 50)

	busJS, err := jetstream.New(connect(t, busURL(leaf)))
	must(t, err)
	src, mir := copies(t, ctx, busJS, "$JS.hub.API")
	eventually(t, 30*time.Second, func() bool {
		si, e1 := src.Info(ctx)
		mi, e2 := mir.Info(ctx)
		return e1 == nil && e2 == nil && si.State.Msgs >= 20 && mi.State.Msgs >= 20
	})

	kickLeaf(t, hub)
	publishN(t, ctx, hubJS, 50, 150) // stored while the link is down or coming back
	eventually(t, 10*time.Second, func() bool { return hub.numLeafs() == 1 })
	publishN(t, ctx, hubJS, 150, 200)

	exactlyOnce(t, ctx, src, 200, false)
	exactlyOnce(t, ctx, mir, 200, true)
}

// kickLeaf makes the hub node holding a leaf link close it, and waits
// until it is gone.
func kickLeaf(t *testing.T, hub *hubCluster) {
	t.Helper()
	for _, ns := range hub.nodes {
		lz, err := ns.Leafz(&natsserver.LeafzOptions{})
		must(t, err)
		for _, l := range lz.Leafs {
			must(t, ns.DisconnectClientByID(l.ID))
			return
		}
	}
	t.Fatal("no leaf link to kick")
}
