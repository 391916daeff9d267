package tests

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// hubCluster is an embedded nats-server cluster that leaves join: every
// node listens for leaf nodes and, with JetStream, has the domain "hub".
type hubCluster struct {
	nodes     []*natsserver.Server
	leafPorts []int
}

// startHubCluster runs n reference servers routed into one cluster and
// waits until each has routes to all the others.
func startHubCluster(t testing.TB, n int, jetstream bool, configure func(*natsserver.Options)) *hubCluster {
	t.Helper()
	h := &hubCluster{}
	// Every node routes to every other, at ports chosen up front: a
	// JetStream node listens (and is ready) only once the cluster formed.
	var routes []*url.URL
	clusterPorts := make([]int, n)
	for i := range n {
		clusterPorts[i] = freeTCPPort(t)
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", clusterPorts[i])})
	}
	for i := range n {
		opts := &natsserver.Options{
			ServerName: fmt.Sprintf("hub-%d", i),
			Host:       "127.0.0.1",
			Port:       -1,
			HTTPPort:   -1,
			NoLog:      true,
			NoSigs:     true,
			JetStream:  jetstream,
			Cluster:    natsserver.ClusterOpts{Name: "hub", Host: "127.0.0.1", Port: clusterPorts[i]},
			LeafNode:   natsserver.LeafNodeOpts{Host: "127.0.0.1", Port: -1},
			Routes:     routes,
		}
		if jetstream {
			opts.StoreDir = t.TempDir()
			opts.JetStreamDomain = "hub"
		}
		if configure != nil {
			configure(opts)
		}
		ns, err := natsserver.NewServer(opts)
		if err != nil {
			t.Fatalf("hub node %d: %v", i, err)
		}
		go ns.Start()
		t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
		h.nodes = append(h.nodes, ns)
	}
	for i, ns := range h.nodes {
		if !ns.ReadyForConnections(20 * time.Second) {
			t.Fatalf("hub node %d not ready", i)
		}
		eventually(t, 10*time.Second, func() bool { return leafPort(ns) > 0 })
		h.leafPorts = append(h.leafPorts, leafPort(ns))
	}
	eventually(t, 20*time.Second, func() bool {
		for _, ns := range h.nodes {
			if ns.NumRoutes() < n-1 || jetstream && !ns.JetStreamIsCurrent() {
				return false
			}
		}
		return true
	})
	return h
}

// leafPort is where a reference node listens for leaf nodes, 0 before
// it does.
func leafPort(ns *natsserver.Server) int {
	v, err := ns.Varz(nil)
	if err != nil {
		return 0
	}
	return v.LeafNode.Port
}

// leafURLs are every node's leaf-node listener.
func (h *hubCluster) leafURLs() []string {
	var out []string
	for _, p := range h.leafPorts {
		out = append(out, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	return out
}

func (h *hubCluster) clientURL(i int) string { return h.nodes[i].ClientURL() }

// startBusLeaf runs a bus joining the hub at urls as a leaf node and
// waits until the link is up on some hub node.
func startBusLeaf(t testing.TB, h *hubCluster, opts server.Options, remote server.LeafRemote) *server.Server {
	t.Helper()
	opts.LeafNodes.Remotes = append(opts.LeafNodes.Remotes, remote)
	s := startBus(t, opts)
	eventually(t, 10*time.Second, func() bool { return h.numLeafs() > 0 })
	return s
}

func (h *hubCluster) numLeafs() int {
	n := 0
	for _, ns := range h.nodes {
		n += ns.NumLeafNodes()
	}
	return n
}

// awaitRoute publishes probes on subject from pub until sub receives
// one, so that interest has crossed every hop, and drains them.
func awaitRoute(t testing.TB, pub *nats.Conn, sub *nats.Subscription, subject string) {
	t.Helper()
	if !waitFor(10*time.Second, func() bool {
		if err := pub.Publish(subject, []byte(probe)); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(50 * time.Millisecond)
		return err == nil && string(m.Data) == probe
	}) {
		t.Fatalf("no route for %s", subject)
	}
	flushAll(t, pub)
	for {
		if _, err := sub.NextMsg(100 * time.Millisecond); err != nil {
			return
		}
	}
}

const probe = "probe"

func flushAll(t testing.TB, ncs ...*nats.Conn) {
	t.Helper()
	for _, nc := range ncs {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}
