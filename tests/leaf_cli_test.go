package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// The nats CLI, pointed at a hub node, manages and reads a bus leaf's
// streams with --js-domain, as with a nats-server leaf.
func TestNatsCLIReachesBusThroughTheHub(t *testing.T) {
	bin := natsCLI(t)
	hub := startHubCluster(t, 3, true, nil)
	startBusLeaf(t, hub, server.Options{JetStream: true, JetStreamDomain: "bus"}, server.LeafRemote{URLs: hub.leafURLs()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := hub.clientURL(2)
	cli := func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, ctx, bin, url, append([]string{"--js-domain", "bus"}, args...)...)
		if err != nil {
			t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	eventually(t, 10*time.Second, func() bool {
		_, err := runCLI(t, ctx, bin, url, "--js-domain", "bus", "account", "info")
		return err == nil
	})
	cli("stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults")
	for _, body := range []string{"one", "two", "three"} {
		cli("pub", "orders.new", body, "--jetstream")
	}
	if out := cli("stream", "ls", "--names"); !strings.Contains(out, "ORDERS") {
		t.Fatalf("stream ls through the hub: %s", out)
	}
	if out := cli("stream", "info", "ORDERS", "--json"); !strings.Contains(out, `"messages": 3`) {
		t.Fatalf("stream info through the hub: %s", out)
	}
	if out := cli("stream", "get", "ORDERS", "2"); !strings.Contains(out, "two") {
		t.Fatalf("stream get through the hub: %s", out)
	}
	// The hub's own domain does not see it.
	out, _ := runCLI(t, ctx, bin, url, "stream", "ls", "--names")
	if strings.Contains(out, "ORDERS") {
		t.Fatalf("the hub's domain lists bus's stream: %s", out)
	}
}
