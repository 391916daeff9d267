package client_test

import (
	"testing"

	"github.com/bus-dev/bus/client"
)

func TestServerDetectsBus(t *testing.T) {
	t.Parallel()
	c := connect(t, startBus(t), client.Options{})
	info, err := c.Server(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if !info.IsBus() || !info.JetStream || info.Version == "" {
		t.Fatalf("bus answered %+v", info)
	}
	for _, ext := range []string{client.ExtDeadLetterSubject, client.ExtBackOffJitter, client.ExtNakBackOff, client.ExtGroupBy, client.ExtLagAlert, client.ExtRedrive} {
		if !info.Has(ext) {
			t.Errorf("bus does not advertise %q: %+v", ext, info)
		}
	}
}

func TestServerDetectsOtherServers(t *testing.T) {
	t.Parallel()
	c := connect(t, startReference(t), client.Options{})
	info, err := c.Server(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.IsBus() || info.Has(client.ExtDeadLetterSubject) {
		t.Fatalf("nats-server taken for bus: %+v", info)
	}
}
