package tests

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// The same scenarios with bus as the leaf and with nats-server as the
// leaf, each against a fresh embedded 3-node hub cluster; the outcomes
// must be the same.

// leafJoiner starts a leaf joined to hub and returns its client URL.
type leafJoiner func(t *testing.T, hub *hubCluster, remote server.LeafRemote) string

func busLeaf(t *testing.T, hub *hubCluster, remote server.LeafRemote) string {
	return busURL(startBusLeaf(t, hub, server.Options{}, remote))
}

func referenceLeaf(t *testing.T, hub *hubCluster, remote server.LeafRemote) string {
	t.Helper()
	return startReferenceLeaf(t, hub, remote).ClientURL()
}

// startReferenceLeaf runs nats-server joined to hub as remote says.
func startReferenceLeaf(t testing.TB, hub *hubCluster, remote server.LeafRemote) *natsserver.Server {
	t.Helper()
	return startReferenceLeafWith(t, hub, remote, nil)
}

// startReferenceLeafJS is a reference leaf with JetStream in domain.
func startReferenceLeafJS(t testing.TB, hub *hubCluster, domain string) *natsserver.Server {
	t.Helper()
	return startReferenceLeafWith(t, hub, server.LeafRemote{URLs: hub.leafURLs()}, func(o *natsserver.Options) {
		o.JetStream, o.JetStreamDomain, o.StoreDir = true, domain, t.TempDir()
	})
}

// startReferenceLeafWith is startReferenceLeaf with more options set.
func startReferenceLeafWith(t testing.TB, hub *hubCluster, remote server.LeafRemote, configure func(*natsserver.Options)) *natsserver.Server {
	t.Helper()
	ro := &natsserver.RemoteLeafOpts{DenyImports: remote.DenyImports, DenyExports: remote.DenyExports, Nkey: remote.Nkey}
	for _, raw := range remote.URLs {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		ro.URLs = append(ro.URLs, u)
	}
	ns := startReferenceWith(t, func(o *natsserver.Options) {
		o.LeafNode = natsserver.LeafNodeOpts{Remotes: []*natsserver.RemoteLeafOpts{ro}, ReconnectInterval: 100 * time.Millisecond}
		if configure != nil {
			configure(o)
		}
	})
	eventually(t, 10*time.Second, func() bool { return hub.numLeafs() > 0 && ns.NumLeafNodes() > 0 })
	return ns
}

// leafScenario runs against a hub and a leaf and reports what happened.
type leafScenario func(t *testing.T, hub *hubCluster, join leafJoiner) []string

func TestLeafMatchesReferenceLeaf(t *testing.T) {
	type hubScenario struct {
		hub func(*natsserver.Options) // how the hub is set up; nil: open
		run leafScenario
	}
	scenarios := map[string]hubScenario{
		"pub sub both ways":                {nil, scenarioLeafPubSub},
		"queue groups prefer local":        {nil, scenarioLeafQueues},
		"request reply and no responders":  {nil, scenarioLeafRequests},
		"deny imports and exports":         {nil, scenarioLeafDenies},
		"hub user's rights bound the link": {hubLeafUser, scenarioLeafUserRights},
		"nkey signs the hub's nonce":       {hubLeafNkey, scenarioLeafNkey},
	}
	names := make([]string, 0, len(scenarios))
	for name := range scenarios {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			sc := scenarios[name]
			ref := sc.run(t, startHubCluster(t, 3, false, sc.hub), referenceLeaf)
			got := sc.run(t, startHubCluster(t, 3, false, sc.hub), busLeaf)
			sameOutcomes(t, ref, got)
		})
	}
}

func scenarioLeafPubSub(t *testing.T, hub *hubCluster, join leafJoiner) []string {
	leafURL := join(t, hub, server.LeafRemote{URLs: hub.leafURLs()[:1]})
	onHub, onLeaf := connect(t, hub.clientURL(1)), connect(t, leafURL)
	var out []string
	hubSub := subSync(t, onHub, "a.*", "")
	awaitRoute(t, onLeaf, hubSub, "a.probe")
	leafSub := subSync(t, onLeaf, "b.>", "")
	awaitRoute(t, onHub, leafSub, "b.probe")
	for i := range 3 {
		m := nats.NewMsg(fmt.Sprintf("a.%d", i))
		m.Data = []byte("to hub")
		if i == 1 {
			m.Header.Set("H", "1")
		}
		m.Reply = "r.x"
		must(t, onLeaf.PublishMsg(m))
		must(t, onHub.Publish(fmt.Sprintf("b.c.%d", i), []byte("to leaf")))
	}
	out = append(out, drainLeaf(t, "hub", hubSub, 3)...)
	out = append(out, drainLeaf(t, "leaf", leafSub, 3)...)
	return out
}

func scenarioLeafQueues(t *testing.T, hub *hubCluster, join leafJoiner) []string {
	leafURL := join(t, hub, server.LeafRemote{URLs: hub.leafURLs()[:1]})
	onHub, onLeaf := connect(t, hub.clientURL(0)), connect(t, leafURL)
	hubWorker := subSync(t, onHub, "jobs", "workers")
	leafWorker := subSync(t, onLeaf, "jobs", "workers")
	awaitRoute(t, onLeaf, leafWorker, "jobs")
	awaitRoute(t, onHub, hubWorker, "jobs")
	for range 20 {
		must(t, onLeaf.Publish("jobs", []byte("leaf job")))
		must(t, onHub.Publish("jobs", []byte("hub job")))
	}
	flushAll(t, onLeaf, onHub)
	out := []string{
		fmt.Sprintf("with a member on each side: leaf worker %d", countMsgs(leafWorker)),
		fmt.Sprintf("with a member on each side: hub worker %d", countMsgs(hubWorker)),
	}
	// Without a member of its own, the leaf's jobs go to the hub's.
	must(t, leafWorker.Unsubscribe())
	flushAll(t, onLeaf)
	probeSub := subSync(t, onHub, "jobs.done", "")
	awaitRoute(t, onLeaf, probeSub, "jobs.done")
	eventually(t, 10*time.Second, func() bool {
		must(t, onLeaf.Publish("jobs", []byte("leaf job")))
		m, err := hubWorker.NextMsg(50 * time.Millisecond)
		return err == nil && string(m.Data) == "leaf job"
	})
	countMsgs(hubWorker)
	for range 10 {
		must(t, onLeaf.Publish("jobs", []byte("leaf job")))
	}
	flushAll(t, onLeaf)
	return append(out, fmt.Sprintf("leaf member gone: hub worker %d", countMsgsWait(hubWorker, 10)))
}

func scenarioLeafRequests(t *testing.T, hub *hubCluster, join leafJoiner) []string {
	leafURL := join(t, hub, server.LeafRemote{URLs: hub.leafURLs()[:1]})
	onHub, onLeaf := connect(t, hub.clientURL(2)), connect(t, leafURL)
	var out []string
	_, err := onLeaf.Subscribe("svc.leaf", func(m *nats.Msg) { _ = m.Respond([]byte("leaf says " + string(m.Data))) })
	must(t, err)
	_, err = onHub.Subscribe("svc.hub", func(m *nats.Msg) { _ = m.Respond([]byte("hub says " + string(m.Data))) })
	must(t, err)
	flushAll(t, onLeaf, onHub)
	out = append(out, requestUntil(t, onHub, "svc.leaf", "hi"), requestUntil(t, onLeaf, "svc.hub", "hello"))
	for _, nc := range []*nats.Conn{onHub, onLeaf} {
		_, err := nc.Request("nobody.home", nil, 2*time.Second)
		out = append(out, fmt.Sprintf("no responders: %v", errors.Is(err, nats.ErrNoResponders)))
	}
	return out
}

func scenarioLeafDenies(t *testing.T, hub *hubCluster, join leafJoiner) []string {
	leafURL := join(t, hub, server.LeafRemote{URLs: hub.leafURLs()[:1], DenyImports: []string{"in.secret.>"}, DenyExports: []string{"out.secret.>"}})
	onHub, onLeaf := connect(t, hub.clientURL(0)), connect(t, leafURL)
	hubSub := subSync(t, onHub, "out.>", "")
	leafSub := subSync(t, onLeaf, "in.>", "")
	awaitRoute(t, onLeaf, hubSub, "out.open")
	awaitRoute(t, onHub, leafSub, "in.open")
	for _, s := range []string{"out.secret.x", "out.open"} {
		must(t, onLeaf.Publish(s, []byte(s)))
	}
	for _, s := range []string{"in.secret.x", "in.open"} {
		must(t, onHub.Publish(s, []byte(s)))
	}
	flushAll(t, onLeaf, onHub)
	return append(drainLeaf(t, "hub", hubSub, 1), drainLeaf(t, "leaf", leafSub, 1)...)
}

// requestUntil asks subject until a responder across the link answers
// (interest takes a moment to cross), and reports the answer.
func requestUntil(t *testing.T, nc *nats.Conn, subject, body string) string {
	t.Helper()
	var answer string
	eventually(t, 10*time.Second, func() bool {
		m, err := nc.Request(subject, []byte(body), 500*time.Millisecond)
		if err != nil {
			return false
		}
		answer = string(m.Data)
		return true
	})
	return subject + ": " + answer
}

func subSync(t testing.TB, nc *nats.Conn, subject, queue string) *nats.Subscription {
	t.Helper()
	var sub *nats.Subscription
	var err error
	if queue == "" {
		sub, err = nc.SubscribeSync(subject)
	} else {
		sub, err = nc.QueueSubscribeSync(subject, queue)
	}
	must(t, err)
	must(t, nc.Flush())
	return sub
}

// drainLeaf reads n messages and then checks that no more come.
func drainLeaf(t *testing.T, who string, sub *nats.Subscription, n int) []string {
	t.Helper()
	var out []string
	for range n {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("%s: %d of %d messages: %v", who, len(out), n, err)
		}
		out = append(out, fmt.Sprintf("%s got %s %q reply=%q header=%q", who, m.Subject, m.Data, m.Reply, m.Header.Get("H")))
	}
	if m, err := sub.NextMsg(200 * time.Millisecond); err == nil {
		out = append(out, fmt.Sprintf("%s got an extra %s %q", who, m.Subject, m.Data))
	}
	return out
}

// countMsgs counts what sub holds once nothing more arrives for a while.
func countMsgs(sub *nats.Subscription) int {
	n := 0
	for {
		if _, err := sub.NextMsg(300 * time.Millisecond); err != nil {
			return n
		}
		n++
	}
}

// countMsgsWait counts want messages (or what came in 5s), then any
// extra.
func countMsgsWait(sub *nats.Subscription, want int) int {
	n := 0
	for ; n < want; n++ {
		if _, err := sub.NextMsg(5 * time.Second); err != nil {
			return n
		}
	}
	return n + countMsgs(sub)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The hub's leaf user may not send on nope.> nor receive hidden.>.
func hubLeafUser(o *natsserver.Options) {
	o.LeafNode.Users = []*natsserver.User{{
		Username: "leaf", Password: "s3cret",
		Permissions: &natsserver.Permissions{
			Publish:   &natsserver.SubjectPermission{Deny: []string{"nope.>"}},
			Subscribe: &natsserver.SubjectPermission{Deny: []string{"hidden.>"}},
		},
	}}
}

func scenarioLeafUserRights(t *testing.T, hub *hubCluster, join leafJoiner) []string {
	u := strings.Replace(hub.leafURLs()[0], "nats://", "nats://leaf:s3cret@", 1)
	leafURL := join(t, hub, server.LeafRemote{URLs: []string{u}})
	onHub, onLeaf := connect(t, hub.clientURL(1)), connect(t, leafURL)
	hubSub := subSync(t, onHub, "*.x", "")
	leafSub := subSync(t, onLeaf, "*.y", "")
	awaitRoute(t, onLeaf, hubSub, "ok.x")
	awaitRoute(t, onHub, leafSub, "shown.y")
	for _, s := range []string{"nope.x", "ok.x"} {
		must(t, onLeaf.Publish(s, []byte(s)))
	}
	for _, s := range []string{"hidden.y", "shown.y"} {
		must(t, onHub.Publish(s, []byte(s)))
	}
	flushAll(t, onLeaf, onHub)
	return append(drainLeaf(t, "hub", hubSub, 1), drainLeaf(t, "leaf", leafSub, 1)...)
}

var leafUserKey, _ = nkeys.CreateUser()

func hubLeafNkey(o *natsserver.Options) {
	pub, _ := leafUserKey.PublicKey()
	o.LeafNode.Nkey = pub
}

func scenarioLeafNkey(t *testing.T, hub *hubCluster, join leafJoiner) []string {
	seed, _ := leafUserKey.Seed()
	leafURL := join(t, hub, server.LeafRemote{URLs: hub.leafURLs()[:1], Nkey: string(seed)})
	onHub, onLeaf := connect(t, hub.clientURL(1)), connect(t, leafURL)
	hubSub := subSync(t, onHub, "signed", "")
	awaitRoute(t, onLeaf, hubSub, "signed")
	must(t, onLeaf.Publish("signed", []byte("by nkey")))
	return drainLeaf(t, "hub", hubSub, 1)
}
