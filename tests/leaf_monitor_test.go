package tests

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// /leafz on a bus leaf has the reference leaf's shape and names its hub,
// its traffic and the interest the hub announced.
func TestLeafzMatchesReferenceLeaf(t *testing.T) {
	hub := startHubCluster(t, 1, false, nil)
	remote := server.LeafRemote{URLs: hub.leafURLs()}
	busLeaf := startBusLeaf(t, hub, server.Options{HTTPPort: -1}, remote)
	ref := startReferenceLeaf(t, hub, remote)
	eventually(t, 5*time.Second, func() bool { return hub.numLeafs() == 2 })
	onHub := connect(t, hub.clientURL(0))
	hubSub := subSync(t, onHub, "x.>", "")
	for _, u := range []string{busURL(busLeaf), ref.ClientURL()} {
		awaitRoute(t, connect(t, u), hubSub, "x.probe")
	}
	busDoc := decodeLeafz(t, fmt.Sprintf("http://%s/leafz?subs=1", busLeaf.HTTPAddr()))
	refDoc := decodeLeafz(t, "http://"+ref.MonitorAddr().String()+"/leafz?subs=1")
	sameShape(t, "/leafz", busDoc, refDoc, map[string]string{
		"leafs[].rtt": "measured only after the first PING round trip",
	})
	sameValues(t, "/leafz", busDoc, refDoc, "leafnodes", "leafs.0.name", "leafs.0.is_spoke", "leafs.0.account", "leafs.0.port")
	// The link's gauge, for the BusLeafNodeDown alert.
	_, metrics := fetch(t, fmt.Sprintf("http://%s/metrics", busLeaf.HTTPAddr()))
	if want := fmt.Sprintf(`bus_leafnode_up{remote=%q,server_id=%q} 1`, hub.leafURLs()[0], busLeaf.ID()); !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	for who, doc := range map[string]map[string]any{"bus": busDoc, "reference": refDoc} {
		list, _ := field(doc, "leafs.0.subscriptions_list").([]any)
		if !slices.ContainsFunc(list, func(v any) bool { return v == "x.>" }) {
			t.Errorf("%s: subscriptions_list %v lacks x.>", who, list)
		}
		if out, _ := field(doc, "leafs.0.out_msgs").(float64); out < 1 {
			t.Errorf("%s: out_msgs %v after probes", who, out)
		}
	}
}

func decodeLeafz(t *testing.T, url string) map[string]any {
	t.Helper()
	code, b := fetch(t, url)
	if code != 200 {
		t.Fatalf("%s: %d %s", url, code, b)
	}
	var m map[string]any
	must(t, json.Unmarshal(b, &m))
	return m
}
